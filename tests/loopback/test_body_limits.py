"""``max_body_size`` on real sockets: declared lengths, chunked running totals and
``Expect: 100-continue``, with raw sockets, httpx and curl. The handler never runs for a body
over the limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http import HTTPStatus

import httpx
import pytest
import trio

from trioframe import Request, Response, Router, ServerConfig

from ._support import RawConnection, assert_error_body, serving, simple_get

pytestmark = pytest.mark.loopback

LIMIT = 1000
CONFIG = ServerConfig(max_body_size=LIMIT)


class Counter:
    def __init__(self) -> None:
        self.calls = 0
        self.sizes: list[int] = []


def _router(counter: Counter) -> Router:
    async def upload(request: Request) -> Response:
        counter.calls += 1
        counter.sizes.append(len(request.body))
        return Response.text(f"received {len(request.body)}")

    async def no_body() -> Response:
        counter.calls += 1
        return Response.text("no body needed")

    return Router().post("/upload", upload).get("/upload", upload).get("/plain", no_body)


def _post_head(length: int, *extra: str, path: str = "/upload") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: test", f"Content-Length: {length}", *extra, "", ""]
    return "\r\n".join(lines).encode()


def _chunked(total: int, piece: int = 400) -> bytes:
    out = bytearray()
    left = total
    while left:
        size = min(piece, left)
        out += b"%x\r\n" % size + b"c" * size + b"\r\n"
        left -= size
    return bytes(out + b"0\r\n\r\n")


# -- raw sockets ----------------------------------------------------------------------------
async def test_declared_content_length_over_limit_is_413_before_the_handler() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(_post_head(LIMIT + 1) + b"x" * (LIMIT + 1))
            response = await connection.read_response()
            assert_error_body(response, 413)
            if response.closes:
                assert await connection.read_until_eof() == b""
            await connection.aclose()
    assert counter.calls == 0


async def test_content_length_at_the_limit_is_accepted() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(_post_head(LIMIT) + b"x" * LIMIT)
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"received 1000"
            await connection.aclose()
    assert counter.calls == 1
    assert counter.sizes == [LIMIT]


async def test_chunked_body_over_limit_is_413_and_the_handler_never_runs() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(
                b"POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + _chunked(LIMIT + 200)
            )
            response = await connection.read_response()
            assert_error_body(response, 413)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()
    assert counter.calls == 0


async def test_chunked_body_at_the_limit_is_accepted() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(
                b"POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + _chunked(LIMIT)
            )
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"received 1000"
            await connection.aclose()
    assert counter.calls == 1


async def test_expect_100_continue_over_limit_is_413_without_continue() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(_post_head(5000, "Expect: 100-continue"))
            response = await connection.read_response()  # the first thing the server says
            assert_error_body(response, 413)
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()
    assert counter.calls == 0


async def test_expect_100_continue_within_limit_gets_continue_then_200() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(_post_head(500, "Expect: 100-continue"))
            interim = await connection.read_response()
            assert interim.status == 100
            await connection.send(b"y" * 500)
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"received 500"
            await connection.aclose()
    assert counter.sizes == [500]


async def test_declared_length_over_limit_on_get_is_413_before_the_handler() -> None:
    """docs/server.md, Body limits: ``max_body_size`` applies to every request all the same; a declared
    Content-Length over it is answered 413 before the handler runs (whatever the method)."""
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(
                b"GET /plain HTTP/1.1\r\nHost: test\r\nContent-Length: 5000\r\n\r\n" + b"g" * 5000
            )
            response = await connection.read_response()
            assert_error_body(response, 413)
            await connection.aclose()
    assert counter.calls == 0


async def test_keep_alive_after_a_drained_413() -> None:
    """A small over-limit body is drained; if the server keeps the connection, the next
    request on it is parsed from the right place (not from the unread body)."""
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            body = b"GET /plain HTTP/1.1\r\nHost: x\r\n\r\n" * 40  # looks like requests
            body = body[: LIMIT + 1].ljust(LIMIT + 1, b"p")
            await connection.send(_post_head(LIMIT + 1) + body + simple_get("/plain"))
            response = await connection.read_response()
            assert_error_body(response, 413)
            if not response.closes:
                response = await connection.read_response()
                assert response.status == 200
                assert response.body == b"no body needed"
                assert counter.calls == 1
            else:
                assert await connection.read_until_eof() == b""
                assert counter.calls == 0
            await connection.aclose()


# -- httpx ----------------------------------------------------------------------------------
def _httpx_posts(url: str) -> list[httpx.Response]:
    def over_limit_chunks() -> Iterator[bytes]:
        for _ in range(6):
            yield b"h" * 200

    with httpx.Client(base_url=url, timeout=5.0) as client:
        return [
            client.post("/upload", content=b"x" * (LIMIT + 1)),
            client.post("/upload", content=b"x" * LIMIT),
            client.post("/upload", content=over_limit_chunks()),  # chunked, 1200 bytes
        ]


async def test_httpx_content_length_and_chunked_limits() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            over, at_limit, chunked = await trio.to_thread.run_sync(_httpx_posts, served.url)
    assert over.status_code == 413
    assert over.json()["status"] == 413
    assert over.json()["error"] == HTTPStatus(413).phrase
    assert at_limit.status_code == 200
    assert at_limit.text == "received 1000"
    assert chunked.status_code == 413
    assert chunked.json()["status"] == 413
    assert counter.calls == 1
    assert counter.sizes == [LIMIT]


# -- curl -----------------------------------------------------------------------------------
async def _curl_post(url: str, data: bytes, *headers: str) -> tuple[int, bytes]:
    args = ["curl", "-s", "-o", "-", "-w", "%{http_code}", "--max-time", "5"]
    for header in headers:
        args += ["-H", header]
    result = await trio.run_process(
        [*args, "--data-binary", "@-", url], stdin=data, capture_stdout=True
    )
    out = result.stdout
    return int(out[-3:]), out[:-3]


async def test_curl_content_length_limits() -> None:
    counter = Counter()
    with trio.fail_after(10):
        async with serving(_router(counter), CONFIG) as served:
            url = served.url + "/upload"
            status, body = await _curl_post(url, b"x" * (LIMIT + 1), "Expect:")
            assert status == 413
            assert json.loads(body)["status"] == 413
            assert counter.calls == 0
            status, body = await _curl_post(url, b"x" * LIMIT, "Expect:")
            assert status == 200
            assert body == b"received 1000"
            assert counter.calls == 1
            # curl with Expect: 100-continue gets the 413 instead of 100 Continue.
            status, body = await _curl_post(url, b"x" * 5000, "Expect: 100-continue")
            assert status == 413
            assert json.loads(body)["status"] == 413
            status, body = await _curl_post(url, b"x" * 700, "Expect: 100-continue")
            assert status == 200
            assert body == b"received 700"
    assert counter.sizes == [LIMIT, 700]
