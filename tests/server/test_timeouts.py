"""Timeouts and cancellation of a connection, on in-memory streams with a mock clock
(``autojump_clock``: virtual time jumps whenever every task is blocked)."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from tests.rawhttp import RawConnection, connect, raw_server, status_of
from trioframe import Request, Response, Router, ServerConfig


async def hello() -> Response:
    return Response.text("hi")


async def echo(request: Request) -> Response:
    return Response.text(f"got {len(request.body)}")


ROUTER = Router().get("/", hello).post("/echo", echo)


async def test_slowloris_head_gets_408_after_header_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = ServerConfig(header_timeout=2.0)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        await conn.send(b"GET / HTTP/1.1\r\n")
        for _ in range(3):  # a header line every 0.5 s keeps the peer busy, never done
            await trio.sleep(0.5)
            await conn.send(b"X-Slow: 1\r\n")
        first = await conn.stream.receive_some()  # type: ignore[union-attr]
        assert trio.current_time() - start == 2.0  # counted from the first byte
        conn.buffer = bytes(first)
        raw = await conn.read_until_closed()
        assert status_of(raw) == 408


async def test_a_connection_that_sends_nothing_is_closed_silently(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with raw_server(ROUTER, ServerConfig(header_timeout=3.0)) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        assert await conn.read_until_closed() == b""
        assert trio.current_time() - start == 3.0


async def test_idle_keep_alive_connection_is_closed_after_keep_alive_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = ServerConfig(keep_alive_timeout=1.5, header_timeout=10)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await conn.response()).status_code == 200
        start = trio.current_time()
        assert await conn.read_until_closed() == b""
        assert trio.current_time() - start == 1.5


async def test_keep_alive_timeout_is_per_idle_period(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = ServerConfig(keep_alive_timeout=1.0)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        for _ in range(3):  # 0.9 s of idleness each time: under the limit, so it stays open
            await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            assert (await conn.response()).status_code == 200
            await trio.sleep(0.9)


async def test_stalled_body_gets_408_after_body_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with raw_server(ROUTER, ServerConfig(body_timeout=4.0)) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        await conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        raw = await conn.read_until_closed()
        assert status_of(raw) == 408
        assert trio.current_time() - start == 4.0


async def test_the_408_to_a_head_request_has_no_body(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A HEAD may carry a body; when it stalls, the server's own 408 is still an answer to a
    # HEAD: the head says the error body's length, and no body follows (found by the fuzzer).
    router = Router().head("/echo", echo)
    async with raw_server(router, ServerConfig(body_timeout=4.0)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"HEAD /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        raw = await conn.read_until_closed()
        assert status_of(raw) == 408
        head, _, body = raw.partition(b"\r\n\r\n")
        assert b"content-length: 75" in head.lower() and body == b""


async def test_body_timeout_is_between_reads_not_for_the_whole_body(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # (min_body_rate at 1 byte/s: this body's 1.25 bytes/s keep up; the default would not)
    config = ServerConfig(body_timeout=1.0, min_body_rate=1.0)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n")
        for byte in b"abcde":  # 5 x 0.8 s = 4 s in all, but never 1 s without a byte
            await trio.sleep(0.8)
            await conn.send(bytes([byte]))
        head = await conn.response()
        assert head.status_code == 200 and conn.body == b"got 5"


async def test_client_that_does_not_read_is_dropped_after_send_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def endless() -> Response:
        async def chunks():  # type: ignore[no-untyped-def]
            while True:
                yield b"x" * 65536

        return Response.stream(chunks())

    server_config = ServerConfig(send_timeout=2.0)
    async with raw_server(Router().get("/", endless), server_config) as (server, nursery):
        client, served = trio.testing.lockstep_stream_pair()  # no buffering at all
        connection_closed = trio.Event()

        async def serve() -> None:
            await server.handle_stream(served, ("127.0.0.1", 1))
            connection_closed.set()

        nursery.start_soon(serve)
        await client.send_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        start = trio.current_time()
        await connection_closed.wait()  # we never read: the server gives up and closes
        assert trio.current_time() - start == 2.0


async def test_client_disconnect_cancels_the_handler() -> None:
    entered, cancelled = trio.Event(), trio.Event()

    async def waits_forever() -> Response:
        entered.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    async with raw_server(Router().get("/", waits_forever)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        await entered.wait()
        await conn.close_write()
        with trio.fail_after(5):
            await cancelled.wait()


async def test_disconnect_does_not_cancel_when_cancel_on_disconnect_is_off() -> None:
    entered, release, finished = trio.Event(), trio.Event(), trio.Event()

    async def waits() -> Response:
        entered.set()
        await release.wait()
        finished.set()
        return Response.text("done")

    config = ServerConfig(cancel_on_disconnect=False)
    async with raw_server(Router().get("/", waits), config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        await entered.wait()
        await conn.close_write()
        await trio.testing.wait_all_tasks_blocked()
        assert not finished.is_set()
        release.set()
        with trio.fail_after(5):
            await finished.wait()


async def test_handler_exception_gives_500_and_the_connection_keeps_serving(
    caplog: object,
) -> None:
    async def boom() -> Response:
        raise RuntimeError("secret detail")

    async with raw_server(Router().get("/boom", boom).get("/", hello)) as (server, nursery):
        conn: RawConnection = connect(server, nursery)
        await conn.send(b"GET /boom HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n")
        first, second = await conn.responses(2)
        assert first.status_code == 500 and b"secret" not in conn.bodies[0]
        assert second.status_code == 200 and conn.bodies[1] == b"hi"


async def test_a_slow_stream_producer_is_not_cut_by_send_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow_events() -> Response:
        async def chunks():  # type: ignore[no-untyped-def]
            await trio.sleep(100)  # longer than send_timeout, before the first chunk
            yield b"first"
            await trio.sleep(100)
            yield b"second"

        return Response.stream(chunks())

    config = ServerConfig(send_timeout=2.0)
    async with raw_server(Router().get("/", slow_events), config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        head = await conn.response()
        assert head.status_code == 200 and conn.body == b"firstsecond"


# -- min_body_rate ------------------------------------------------------------------------------
RATE = 10  # bytes per second
SECONDS = 30


async def _trickle(conn: RawConnection, per_second: int) -> None:
    """``per_second`` bytes each second, ``SECONDS`` times (each within ``body_timeout``)."""
    try:
        for _ in range(SECONDS):
            await conn.send(b"x" * per_second)
            await trio.sleep(1)
    except trio.BrokenResourceError:  # the server closed the connection
        pass


@pytest.mark.parametrize(("extra", "expected"), [(-1, 408), (0, 200), (1, 200)])
async def test_min_body_rate(
    extra: int, expected: int, autojump_clock: trio.testing.MockClock
) -> None:
    # The time spent waiting for the body may reach body_timeout (2.05 s) plus a second for
    # every RATE bytes received. At RATE - 1 bytes a second the client falls 0.1 s further
    # behind each second: after 21 chunks, 0.95 s is left for the 22nd, which comes 1 s later.
    per_second = RATE + extra
    config = ServerConfig(body_timeout=2.05, min_body_rate=RATE)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        size = per_second * SECONDS
        await conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % size)
        nursery.start_soon(_trickle, conn, per_second)
        head = await conn.response()
        assert head.status_code == expected
        if expected == 408:
            assert trio.current_time() - start == pytest.approx(20.95)
            assert json.loads(conn.body)["message"] == "request body too slow"
        else:
            assert conn.body == b"got %d" % size


async def test_a_stall_past_body_timeout_is_still_timed_out_not_too_slow(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Well ahead of min_body_rate, a single wait still ends after body_timeout.
    config = ServerConfig(body_timeout=2.0, min_body_rate=1.0)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n")
        await conn.send(b"x" * 100)  # 100 s of credit at 1 byte/s; then nothing
        start = trio.current_time()
        head = await conn.response()
        assert head.status_code == 408 and trio.current_time() - start == 2.0
        assert json.loads(conn.body)["message"] == "request body timed out"


@pytest.mark.parametrize(("extra", "kept"), [(-1, False), (0, True), (1, True)])
async def test_min_body_rate_while_draining_a_body_the_handler_left(
    extra: int, kept: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # The handler answers without reading; the server reads the rest to keep the connection,
    # at the same pace: a body below min_body_rate ends the connection instead.
    per_second = RATE + extra
    config = ServerConfig(body_timeout=2.05, min_body_rate=RATE)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        size = per_second * SECONDS
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % size)
        assert (await conn.response()).status_code == 200
        await _trickle(conn, per_second)
        if kept:
            await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            assert (await conn.response()).status_code == 200
        else:
            assert await conn.read_until_closed() == b""
