"""What ``shutdown_timeout`` does to requests that outlive it."""

from __future__ import annotations

import pytest
import trio

from tests.loopback._support import RawConnection, assert_error_body, simple_get
from trioframe import Response, Router, Server, ServerConfig

pytestmark = pytest.mark.loopback


async def test_a_request_still_running_at_the_deadline_is_cancelled_and_gets_503() -> None:
    entered, cancelled = trio.Event(), trio.Event()

    async def stuck() -> Response:
        entered.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    server = Server(
        Router().get("/stuck", stuck), "127.0.0.1:0", ServerConfig(shutdown_timeout=0.3)
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            connection = await RawConnection.open(host, port)
            await connection.send(simple_get("/stuck"))
            await entered.wait()
            start = trio.current_time()
            server.shutdown()
            response = await connection.read_response()
            assert 0.3 <= trio.current_time() - start < 2.0
            assert cancelled.is_set()
            assert_error_body(response, 503)
            assert response.closes
        # serve() returned on its own: the nursery is done without being cancelled


async def test_a_started_streaming_response_is_cut_off_at_the_deadline() -> None:
    async def stream() -> Response:
        async def chunks():  # type: ignore[no-untyped-def]
            yield b"first"
            await trio.sleep_forever()

        return Response.stream(chunks())

    server = Server(Router().get("/s", stream), "127.0.0.1:0", ServerConfig(shutdown_timeout=0.3))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            connection = await RawConnection.open(host, port)
            await connection.send(simple_get("/s"))
            assert b"first" in await connection._read_until(b"first")
            server.shutdown()
            rest = await connection.read_until_eof()
            assert b"0\r\n\r\n" not in rest  # closed without the final chunk: cut short


async def test_a_head_still_arriving_at_the_deadline_gets_503() -> None:
    server = Server(Router(), "127.0.0.1:0", ServerConfig(shutdown_timeout=0.3))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            connection = await RawConnection.open(host, port)
            await connection.send(b"GET / HTTP/1.1\r\nHost: t\r\n")  # the head never ends
            await trio.testing.wait_all_tasks_blocked()
            server.shutdown()
            response = await connection.read_response()
            assert_error_body(response, 503)


async def test_a_server_can_serve_again_after_a_shutdown() -> None:
    async def hello() -> Response:
        return Response.text("hello")

    server = Server(Router().get("/", hello), "127.0.0.1:0")
    with trio.fail_after(10):
        for _ in range(2):
            async with trio.open_nursery() as nursery:
                [(host, port)] = await nursery.start(server.serve)
                connection = await RawConnection.open(host, port)
                await connection.send(simple_get("/"))
                assert (await connection.read_response()).body == b"hello"
                await connection.aclose()
                server.shutdown()
