"""Graceful shutdown answers every request it processes: a request is either refused before
its handler runs (503, or the connection closed before any byte of it was read) or answered.

The race: a keep-alive connection waits idle; the next request's bytes arrive and wake its
reader, and shutdown begins before that task has run. The connection still looked idle, so
shutdown cancelled it; the request used to be read and handled anyway, and its response was
never sent. Here the bytes are put into the server's in-memory receive stream and shutdown
begins in the same task step, before the connection's task runs: the race, every time.
"""

from __future__ import annotations

import trio
import trio.testing

from trioframe import Response, Router, Server, ServerConfig

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
) -> None:
    nursery.start_soon(server.handle_stream, stream, ("127.0.0.1", 40000))
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
    assert app.calls == 0, "the handler ran for a request that got no answer"
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
    assert app.calls == 0
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
    assert app.calls == 0
