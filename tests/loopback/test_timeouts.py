"""Timeouts on real sockets: slow heads (408), silent and idle connections (closed),
clients that stop reading (dropped)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio

from trioframe import Response, Router, ServerConfig

from ._support import RawConnection, assert_error_body, fetch, serving, simple_get

pytestmark = pytest.mark.loopback


async def index() -> Response:
    return Response.text("index")


ROUTER = Router().get("/", index)


async def test_slowloris_head_gets_408_within_header_timeout() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(header_timeout=0.5)) as served:
            connection = await RawConnection.open(served.host, served.port)
            started = trio.current_time()
            await connection.send(b"GET / HTTP/1.1\r\nHost: test\r\n")
            answered = False
            # Trickle one header byte at a time; between bytes, wait (briefly) for an answer.
            for _ in range(50):
                try:
                    await connection.send(b"X")
                except trio.BrokenResourceError:
                    break
                with trio.move_on_after(0.1):
                    answered = bool(await connection.receive_some())
                if answered or connection.eof:
                    break
            elapsed = trio.current_time() - started
            assert answered, "the server neither answered nor closed the slow connection"
            response = await connection.read_response()
            assert_error_body(response, 408)
            assert response.closes
            assert await connection.read_until_eof() == b""
            assert 0.4 <= elapsed <= 2.0, elapsed
            await connection.aclose()


async def test_silent_connection_is_closed_without_answer_after_header_timeout() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(header_timeout=0.5)) as served:
            connection = await RawConnection.open(served.host, served.port)
            started = trio.current_time()
            assert await connection.read_until_eof() == b""
            elapsed = trio.current_time() - started
            assert 0.4 <= elapsed <= 2.0, elapsed
            await connection.aclose()


async def test_idle_keep_alive_connection_is_closed_after_keep_alive_timeout() -> None:
    with trio.fail_after(10):
        config = ServerConfig(keep_alive_timeout=0.3, header_timeout=5.0)
        async with serving(ROUTER, config) as served:
            response, connection = await fetch(served.host, served.port, simple_get())
            answered = trio.current_time()
            assert response.status == 200
            assert not response.closes
            with trio.fail_after(5):
                assert await connection.read_until_eof() == b""
            elapsed = trio.current_time() - answered
            assert 0.2 <= elapsed <= 2.0, elapsed
            await connection.aclose()


async def test_client_that_stops_reading_is_dropped_after_send_timeout() -> None:
    chunk = b"z" * 65536
    total_chunks = 800  # 50 MiB: far more than the socket buffers hold
    produced = 0
    stream_closed = trio.Event()

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal produced
        try:
            for _ in range(total_chunks):
                produced += 1
                yield chunk
        finally:
            stream_closed.set()

    async def big() -> Response:
        return Response.stream(chunks())

    router = Router().get("/big", big)
    with trio.fail_after(10):
        async with serving(router, ServerConfig(send_timeout=0.5)) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/big"))
            await stream_closed.wait()  # the generator was closed: the server gave up
            assert produced < total_chunks
            # The connection was dropped: what is buffered drains, then EOF.
            received = await connection.read_until_eof()
            assert len(received) < total_chunks * len(chunk)
            await connection.aclose()


async def test_send_timeout_closes_the_stream_iterator_even_while_referenced() -> None:
    """The server must ``aclose`` the iterator it was given, not merely drop it: here the
    application keeps a reference (as a registry of live streams would), so garbage
    collection cannot close it in the server's place."""
    live_streams: list[AsyncIterator[bytes]] = []
    stream_closed = trio.Event()

    async def chunks() -> AsyncIterator[bytes]:
        try:
            for _ in range(800):
                yield b"z" * 65536
        finally:
            stream_closed.set()

    async def big() -> Response:
        iterator = chunks()
        live_streams.append(iterator)
        return Response.stream(iterator)

    router = Router().get("/big", big)
    with trio.fail_after(10):
        async with serving(router, ServerConfig(send_timeout=0.5)) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/big"))
            with trio.move_on_after(5):
                await stream_closed.wait()
            assert stream_closed.is_set(), (
                "the server dropped the connection without closing the response iterator"
            )
            await connection.read_until_eof()
            await connection.aclose()
    assert len(live_streams) == 1
