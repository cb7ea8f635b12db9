"""Graceful shutdown answers every request it processes: a request is either refused before
its handler runs (503, or the connection closed before any byte of it was read) or answered.

The race: a keep-alive connection waits idle; the next request's bytes arrive and wake its
reader, and shutdown begins before that task has run. The connection still looked idle, so
shutdown cancelled it; the request used to be read and handled anyway, and its response was
never sent. Here the bytes are put into the server's in-memory receive stream and shutdown
begins in the same task step, before the connection's task runs: the race, every time.

A connection accepted just before shutdown, whose first request is on its way, is served: a
client that has just connected expects an answer, and during a rolling restart of a worker
fleet the old worker accepts connections until the moment it is told to stop.
"""

from __future__ import annotations

import trio
import trio.testing

from trioframe import Response, Router, Server, ServerConfig
from trioframe._server.http1.connection import FIRST_REQUEST_GRACE

from ..rawhttp import status_of

REQUEST = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    async def handler(self) -> Response:
        self.calls += 1
        return Response.text("ok")


async def _serve_one(
    server: Server,
    stream: trio.StapledStream[trio.abc.SendStream, trio.abc.ReceiveStream],
    nursery: trio.Nursery,
    *,
    served: int = 1,
) -> None:
    """Start serving ``stream``; with ``served``, that many requests are answered first (the
    connection is then a keep-alive one, idle between requests)."""
    nursery.start_soon(server.handle_stream, stream, ("127.0.0.1", 40000))
    assert isinstance(stream.receive_stream, trio.testing.MemoryReceiveStream)
    assert isinstance(stream.send_stream, trio.testing.MemorySendStream)
    for _ in range(served):
        stream.receive_stream.put_data(REQUEST)
        await trio.testing.wait_all_tasks_blocked()
        assert status_of(stream.send_stream.get_data_nowait()) == 200
    await trio.testing.wait_all_tasks_blocked()


async def test_request_arriving_as_shutdown_begins_is_refused_before_its_handler() -> None:
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0))
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    async with trio.open_nursery() as nursery:
        await _serve_one(server, trio.StapledStream(outgoing, incoming), nursery)
        (connection,) = state.connections
        assert connection.is_idle
        incoming.put_data(REQUEST)  # wakes the connection's reader ...
        state.shutting_down = True
        connection.begin_shutdown()  # ... which has not run yet: it still looks idle
        await trio.testing.wait_all_tasks_blocked()
        answer = outgoing.get_data_nowait()
        nursery.cancel_scope.cancel()
    assert app.calls == 1, "the handler ran for a request that got no answer"
    assert status_of(answer) == 503
    assert b"connection: close" in answer.lower()
    assert b"the server is shutting down" in answer


async def test_request_partly_arrived_when_shutdown_begins_gets_503_not_408() -> None:
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0))
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    async with trio.open_nursery() as nursery:
        await _serve_one(server, trio.StapledStream(outgoing, incoming), nursery)
        (connection,) = state.connections
        incoming.put_data(REQUEST[:10])
        state.shutting_down = True
        connection.begin_shutdown()
        await trio.testing.wait_all_tasks_blocked()
        answer = outgoing.get_data_nowait()
        nursery.cancel_scope.cancel()
    assert app.calls == 1
    assert status_of(answer) == 503


async def test_idle_connection_with_nothing_sent_closes_silently_at_shutdown() -> None:
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0), ServerConfig())
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    async with trio.open_nursery() as nursery:
        await _serve_one(server, trio.StapledStream(outgoing, incoming), nursery)
        (connection,) = state.connections
        state.shutting_down = True
        connection.begin_shutdown()
        await trio.testing.wait_all_tasks_blocked()
        assert not state.connections  # closed, with nothing sent
        assert outgoing.get_data_nowait() == b""
    assert app.calls == 1


async def test_new_connection_whose_request_arrives_as_shutdown_begins_is_served() -> None:
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0))
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    async with trio.open_nursery() as nursery:
        await _serve_one(server, trio.StapledStream(outgoing, incoming), nursery, served=0)
        (connection,) = state.connections
        incoming.put_data(REQUEST)
        state.shutting_down = True
        connection.begin_shutdown()
        await trio.testing.wait_all_tasks_blocked()
        answer = outgoing.get_data_nowait()
        nursery.cancel_scope.cancel()
    assert app.calls == 1
    assert status_of(answer) == 200
    assert b"connection: close" in answer.lower()


async def test_connection_accepted_after_shutdown_began_serves_its_request() -> None:
    """Accepted, then shutdown begins before its task first runs: its request (already
    there) is read and answered, not reset away with the connection."""
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0))
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    incoming.put_data(REQUEST)
    state.shutting_down = True
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, trio.StapledStream(outgoing, incoming), None)
        await trio.testing.wait_all_tasks_blocked()
        answer = outgoing.get_data_nowait()
        nursery.cancel_scope.cancel()
    assert app.calls == 1
    assert status_of(answer) == 200
    assert b"connection: close" in answer.lower()


async def test_new_connection_that_sends_nothing_closes_after_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = Server(Router().get("/", Counting().handler), ("127.0.0.1", 0))
    state = server._prepare()
    incoming = trio.testing.MemoryReceiveStream()
    outgoing = trio.testing.MemorySendStream()
    async with trio.open_nursery() as nursery:
        await _serve_one(server, trio.StapledStream(outgoing, incoming), nursery, served=0)
        (connection,) = state.connections
        state.shutting_down = True
        started = trio.current_time()
        connection.begin_shutdown()
        await state.wait_all_closed()
        waited = trio.current_time() - started
    assert FIRST_REQUEST_GRACE <= waited < FIRST_REQUEST_GRACE + 0.1
    assert outgoing.get_data_nowait() == b""
