"""Each request gets exactly one answer: an error found after a request was answered closes
the connection without a second answer, and a request that fails after an earlier one on
the same connection is answered like the first one would be (found by tests/fuzz)."""

from __future__ import annotations

import trio
import trio.testing

from trioframe import Response, Router, ServerConfig

from ..rawhttp import connect, raw_server


async def ok() -> Response:
    return Response.text("ok")


ROUTER = Router().get("/", ok).post("/", ok)


async def test_a_head_timeout_after_a_first_response_is_answered_408(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with raw_server(ROUTER, ServerConfig(header_timeout=5.0)) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\n")
        first, second = await connection.responses(2)
        assert first.status_code == 200
        assert second.status_code == 408


async def test_the_end_of_the_stream_while_draining_gets_no_second_answer() -> None:
    async with raw_server(ROUTER) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\nab")
        await connection.stream.send_stream.aclose()  # type: ignore[union-attr]  # half-close
        raw = await connection.read_until_closed()
        assert raw.count(b"HTTP/1.1 ") == 1
        assert raw.startswith(b"HTTP/1.1 200")
