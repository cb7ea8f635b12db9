"""The connection limit's choice (``_server/slots.py``), step by step: which connections may
be closed to make room, in which order, and what their clients get. Deterministic: each test
puts a connection in the state it needs and calls ``ServingState.make_room`` in the same task
step as the bytes it races with (real socket pairs where unread bytes matter, in-memory
streams elsewhere)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import pytest
import trio
import trio.testing

from tests.http2.support import NO_ERROR, connect, h2_config
from tests.rawhttp import RawConnection, status_of
from tests.rawhttp import connect as connect_raw
from trioframe import Response, Router, Server, ServerConfig
from trioframe._server.http1.connection import HTTP1Connection
from trioframe._server.slots import Evictable, Eviction, Rank, evict_one
from trioframe._server.state import ServingState

REQUEST = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
AT_CAPACITY = "the server is at its connection limit"
#: timeouts long enough that only the connection limit closes anything here
PATIENT = ServerConfig(header_timeout=60.0, keep_alive_timeout=60.0, tls_handshake_timeout=60.0)


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    async def handler(self) -> Response:
        self.calls += 1
        return Response.text("ok")


# -- the order --------------------------------------------------------------------------------
@attrs.define(eq=False)
class Holder:
    name: str
    evictable: Evictable | None
    refuses: bool = False  # as a connection with unread bytes does
    log: list[str] = attrs.Factory(list)

    def evict(self, reason: str) -> bool:
        self.log.append(self.name)
        return not self.refuses


def test_lingering_connections_go_first_then_the_longest_waiting() -> None:
    log: list[str] = []
    holders = [
        Holder("busy", None, log=log),
        Holder("waiting since 5", Evictable(Rank.WAITING, 5.0), log=log),
        Holder("waiting since 2", Evictable(Rank.WAITING, 2.0), log=log),
        Holder("lingering since 9", Evictable(Rank.LINGERING, 9.0), log=log),
    ]
    for expected in ("lingering since 9", "waiting since 2", "waiting since 5"):
        log.clear()
        assert evict_one(holders, AT_CAPACITY) is Eviction.DONE
        assert log == [expected]
        holders = [h for h in holders if h.name != expected]
    assert evict_one(holders, AT_CAPACITY) is Eviction.NONE


def test_a_connection_that_refuses_is_passed_over_for_the_next() -> None:
    log: list[str] = []
    first = Holder("first", Evictable(Rank.WAITING, 1.0), refuses=True, log=log)
    second = Holder("second", Evictable(Rank.WAITING, 2.0), log=log)
    assert evict_one([second, first], AT_CAPACITY) is Eviction.DONE
    assert log == ["first", "second"]
    log.clear()
    assert evict_one([first], AT_CAPACITY) is Eviction.SKIPPED
    assert log == ["first"]


# -- HTTP/1.1 over a real socket pair -----------------------------------------------------------
@attrs.frozen
class Pair:
    state: ServingState
    client: socket.socket  # blocking: a send is in the server's socket when it returns

    def receive_all(self) -> bytes:
        """What the server sent until it closed (a reset counts as a close)."""
        self.client.settimeout(5)
        received = b""
        try:
            while chunk := self.client.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
        return received

    def receive_response(self) -> bytes:
        self.client.settimeout(5)
        received = b""
        while b"\r\n\r\n" not in received or not received.endswith(b"ok"):
            chunk = self.client.recv(65536)
            assert chunk, f"closed after {received!r}"
            received += chunk
        return received


@asynccontextmanager
async def socket_pair(app: Counting, config: ServerConfig = PATIENT) -> AsyncIterator[Pair]:
    """One connection served over a real socket pair (the server's end is a
    ``trio.SocketStream``, whose socket ``make_room`` can poll), waiting for its first
    request."""
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0), config)
    state = server._prepare()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(theirs))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.handle_stream, stream, ("127.0.0.1", 40000))
            await trio.testing.wait_all_tasks_blocked()
            (connection,) = state.connections
            assert isinstance(connection, HTTP1Connection) and connection.is_idle
            yield Pair(state, ours)
            nursery.cancel_scope.cancel()


async def test_a_connection_whose_request_waits_in_its_socket_is_not_evicted() -> None:
    app = Counting()
    async with socket_pair(app) as pair:
        pair.client.sendall(REQUEST)  # arrived; the connection's task has not run since
        assert pair.state.make_room(AT_CAPACITY) is Eviction.SKIPPED
        response = await trio.to_thread.run_sync(pair.receive_response)
    assert response.startswith(b"HTTP/1.1 200 ") and app.calls == 1


async def test_a_request_arriving_as_its_idle_connection_is_evicted_gets_503() -> None:
    app = Counting()
    async with socket_pair(app) as pair:
        assert pair.state.make_room(AT_CAPACITY) is Eviction.DONE  # nothing unread yet
        pair.client.sendall(REQUEST)  # ... and now the request is there, unread
        answer = await trio.to_thread.run_sync(pair.receive_all)
    assert app.calls == 0
    assert status_of(answer) == 503
    assert b"connection: close" in answer.lower()
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["message"] == AT_CAPACITY


async def test_an_idle_connection_evicted_with_nothing_arriving_is_closed_silently() -> None:
    async with socket_pair(Counting()) as pair:
        assert pair.state.make_room(AT_CAPACITY) is Eviction.DONE
        assert await trio.to_thread.run_sync(pair.receive_all) == b""


# -- HTTP/1.1 phases, in memory ----------------------------------------------------------------
async def test_a_new_connection_is_not_evictable_before_it_has_looked_at_its_bytes() -> None:
    server = Server(Router().get("/", Counting().handler), ("127.0.0.1", 0), PATIENT)
    _client, served = trio.testing.memory_stream_pair()
    connection = HTTP1Connection(server._prepare(), served, ("127.0.0.1", 40000))
    assert connection.evictable is None
    assert not connection.evict(AT_CAPACITY)


async def test_a_partial_head_is_evicted_with_503_and_the_connection_closes() -> None:
    app = Counting()
    server = Server(Router().get("/", app.handler), ("127.0.0.1", 0), PATIENT)
    state = server._prepare()
    async with trio.open_nursery() as nursery:
        conn = connect_raw(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n")  # a slowloris' first lines
        await trio.testing.wait_all_tasks_blocked()
        assert state.make_room(AT_CAPACITY) is Eviction.DONE
        raw = await conn.read_until_closed()
        nursery.cancel_scope.cancel()
    assert status_of(raw) == 503 and b"connection: close" in raw.lower()
    assert app.calls == 0


async def test_a_lingering_connection_is_closed_at_once_for_a_waiting_client(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = Server(Router().get("/", Counting().handler), ("127.0.0.1", 0), PATIENT)
    state = server._prepare()
    async with trio.open_nursery() as nursery:
        conn = connect_raw(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\n\r\n")  # no Host: 400, then the server lingers
        await trio.testing.wait_all_tasks_blocked()
        (connection,) = state.connections
        assert connection.evictable is not None and connection.evictable.rank is Rank.LINGERING
        start = trio.current_time()
        assert state.make_room(AT_CAPACITY) is Eviction.DONE
        raw = await conn.read_until_closed()
        assert trio.current_time() == start  # not after the linger's second
        nursery.cancel_scope.cancel()
    assert status_of(raw) == 400
    assert state.connections == set()


async def test_a_connection_serving_a_request_is_never_evicted() -> None:
    release = trio.Event()

    async def slow() -> Response:
        await release.wait()
        return Response.text("ok")

    server = Server(Router().get("/", slow), ("127.0.0.1", 0), PATIENT)
    state = server._prepare()
    async with trio.open_nursery() as nursery:
        conn = connect_raw(server, nursery)
        await conn.send(REQUEST)
        await trio.testing.wait_all_tasks_blocked()
        assert state.make_room(AT_CAPACITY) is Eviction.NONE
        release.set()
        assert (await conn.response()).status_code == 200
        nursery.cancel_scope.cancel()


# -- before the protocol runs; HTTP/2 ------------------------------------------------------------
@pytest.mark.parametrize("first", [b"", b"PRI * HTTP/2"], ids=["nothing", "part of the preface"])
async def test_a_connection_still_being_sniffed_is_evictable(first: bytes) -> None:
    server = Server(Router().get("/", Counting().handler), ("127.0.0.1", 0), h2_config())
    state = server._prepare()
    async with trio.open_nursery() as nursery:
        client, served = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle_stream, served, ("127.0.0.1", 40000))
        if first:
            await client.send_all(first)
        await trio.testing.wait_all_tasks_blocked()
        assert len(state.opening) == 1 and not state.connections
        assert state.make_room(AT_CAPACITY) is Eviction.DONE
        assert await RawConnection(client).read_until_closed() == b""
        assert not state.opening
        nursery.cancel_scope.cancel()


async def test_an_http2_connection_with_no_stream_in_progress_gets_goaway() -> None:
    server = Server(Router().get("/", Counting().handler), ("127.0.0.1", 0), h2_config())
    state = server._prepare()
    async with trio.open_nursery() as nursery:
        peer = await connect(server, nursery)
        await peer.request(1)
        assert (await peer.response(1)).status == 200
        await trio.testing.wait_all_tasks_blocked()
        assert state.make_room(AT_CAPACITY) is Eviction.DONE
        goaway = await peer.goaway()
        assert (goaway.last_stream_id, goaway.error_code) == (1, NO_ERROR)
        await peer.closed()
        nursery.cancel_scope.cancel()
