"""The second line of defence: a response the protocol layer refuses (built from raw header
pairs, which skip the builders' checks, or with a Content-Length that does not match its body)
is answered 500 with the standard error body and the connection is closed; logged once."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from trioframe import Response, Router
from trioframe.testing import TestClient

from ..rawhttp import connect, raw_server, status_of


async def ok() -> Response:
    return Response.text("ok")


async def vertical_tab() -> Response:
    return Response(200, b"x", [(b"x-a", b"a\x0bb")])


async def form_feed() -> Response:
    return Response(200, b"x", [(b"x-a", b"a\x0cb")])


async def too_long() -> Response:
    return Response(200, b"hello", [(b"content-length", b"99")])


async def too_short() -> Response:
    return Response(200, b"hello", [(b"content-length", b"2")])


async def informational() -> Response:
    response = Response(200)
    response.status = 150  # past the builder's check, as buggy code could
    return response


async def huge_status() -> Response:
    response = Response(200)
    response.status = 1000
    return response


async def transfer_encoding() -> Response:
    return Response(200, b"x", [(b"transfer-encoding", b"gzip")])


HANDLERS = {
    "/vt": vertical_tab,
    "/ff": form_feed,
    "/too-long": too_long,
    "/too-short": too_short,
    "/150": informational,
    "/1000": huge_status,
    "/te": transfer_encoding,
}


def router() -> Router:
    r = Router().get("/", ok)
    for path, handler in HANDLERS.items():
        r = r.get(path, handler)
    return r


@pytest.mark.parametrize("path", list(HANDLERS))
async def test_unsendable_response_is_a_500_and_the_next_request_is_served(
    path: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with TestClient(router()) as client:
        response = await client.get(path)
        assert response.status_code == 500
        assert response.json() == {
            "status": 500,
            "error": "Internal Server Error",
            "message": "Internal Server Error",
        }
        assert response.headers["connection"] == "close"
        assert (await client.get("/")).text == "ok"
    logged = [r for r in caplog.records if "answering 500 instead" in r.getMessage()]
    assert len(logged) == 1


async def test_unsendable_response_closes_a_keep_alive_connection() -> None:
    async with raw_server(router()) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(
            b"GET /vt HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n"
        )
        raw = await connection.read_until_closed()
        assert status_of(raw) == 500
        assert raw.count(b"HTTP/1.1") == 1  # the pipelined request is not served on it


async def test_head_of_a_mismatched_length_is_not_refused() -> None:
    # HEAD sends no body, so a Content-Length announcing the GET's size is fine.
    async with TestClient(router()) as client:
        response = await client.head("/too-long")
        assert response.status_code == 200
        assert response.headers["content-length"] == "99"


async def test_a_streamed_body_longer_than_its_content_length_is_cut() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"abcdef"

    async def long_stream() -> Response:
        return Response.stream(chunks()).with_header("content-length", "3")

    async with raw_server(Router().get("/", long_stream)) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        raw = await connection.read_until_closed()
        assert status_of(raw) == 200
        assert raw.endswith(b"\r\n\r\n")  # the head went out; no body byte beyond it


async def test_the_failure_is_logged_at_error_level(caplog: pytest.LogCaptureFixture) -> None:
    async with TestClient(router()) as client:
        await client.get("/te")
    records = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert records and records[0].exc_info is not None
