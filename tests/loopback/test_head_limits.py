"""Request heads over ``max_header_size`` are answered 431 and the connection is closed."""

from __future__ import annotations

import pytest
import trio

from trioframe import Response, Router, ServerConfig

from ._support import assert_error_body, fetch, serving, simple_get

pytestmark = pytest.mark.loopback


async def index() -> Response:
    return Response.text("index")


ROUTER = Router().get("/", index)


def _head_of_size(size: int) -> bytes:
    """A complete GET head (request line .. blank line) of exactly ``size`` bytes."""
    base = simple_get(extra="X-Pad: \r\n")
    head = simple_get(extra="X-Pad: " + "a" * (size - len(base)) + "\r\n")
    assert len(head) == size
    return head


async def test_oversized_head_in_one_send_is_431_and_closes() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:  # default max_header_size: 16 KiB
            head = simple_get(extra="X-Big: " + "b" * (20 * 1024) + "\r\n")
            assert len(head) > 20 * 1024
            response, connection = await fetch(served.host, served.port, head)
            body = assert_error_body(response, 431)
            assert body["error"] == "Request Header Fields Too Large"
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()
            # The server goes on serving new connections.
            response, connection = await fetch(served.host, served.port, simple_get())
            assert response.status == 200
            assert response.body == b"index"
            await connection.aclose()


async def test_oversized_head_without_its_end_is_431_and_closes() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            partial = simple_get()[:-2] + b"X-Big: " + b"b" * (20 * 1024)  # no blank line
            response, connection = await fetch(served.host, served.port, partial)
            assert_error_body(response, 431)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()


async def test_many_small_header_lines_over_the_size_limit_are_431() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(max_header_count=1000)) as served:
            lines = "".join(f"X-H{i}: {'v' * 30}\r\n" for i in range(600))  # ~24 KiB
            response, connection = await fetch(served.host, served.port, simple_get(extra=lines))
            assert_error_body(response, 431)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()


async def test_head_of_exactly_max_header_size_is_accepted() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(max_header_size=1024)) as served:
            response, connection = await fetch(served.host, served.port, _head_of_size(1024))
            assert response.status == 200
            assert response.body == b"index"
            assert not response.closes
            # Keep-alive still works after a head at the limit.
            await connection.send(_head_of_size(1024))
            response = await connection.read_response()
            assert response.status == 200
            await connection.aclose()


async def test_head_one_byte_over_max_header_size_is_431() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(max_header_size=1024)) as served:
            response, connection = await fetch(served.host, served.port, _head_of_size(1025))
            assert_error_body(response, 431)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()


async def test_too_many_header_fields_is_431() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(max_header_count=10)) as served:
            lines = "".join(f"X-H{i}: v\r\n" for i in range(20))
            response, connection = await fetch(served.host, served.port, simple_get(extra=lines))
            assert_error_body(response, 431)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()
