"""One connection, several requests: pipelining, keep-alive after a 500, the connection
limit, and what a client that goes away does to its handler."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import trio
import trio.lowlevel
import trio.testing

from trioframe import Request, Response, Router, ServerConfig
from trioframe._server.http1.reader import StreamReader

from ._support import RawConnection, assert_error_body, fetch, serving, simple_get

pytestmark = pytest.mark.loopback


# -- pipelining -----------------------------------------------------------------------------
async def test_pipelined_requests_are_answered_in_order() -> None:
    started: list[str] = []
    slow_started = trio.Event()
    release_slow = trio.Event()

    async def echo(request: Request) -> Response:
        started.append(request.uri.path)
        if request.uri.path == "/slow":
            slow_started.set()
            await release_slow.wait()
            for _ in range(20):  # more checkpoints: other tasks get every chance to run
                await trio.lowlevel.checkpoint()
        return Response.text(f"path={request.uri.path}")

    router = Router().get("/slow", echo).get("/b", echo).get("/c", echo)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/slow") + simple_get("/b") + simple_get("/c"))
            await slow_started.wait()
            await trio.testing.wait_all_tasks_blocked()
            assert started == ["/slow"]  # the later requests wait for the first response
            release_slow.set()
            bodies = [(await connection.read_response()).body for _ in range(3)]
            assert bodies == [b"path=/slow", b"path=/b", b"path=/c"]
            assert started == ["/slow", "/b", "/c"]
            await connection.aclose()


async def test_pipelined_request_after_a_chunked_body_is_not_lost() -> None:
    async def echo(request: Request) -> Response:
        return Response.text(f"{request.method} {request.uri.path} {request.body.decode()}")

    router = Router().post("/a", echo).get("/b", echo).post("/c", echo)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(
                b"POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                + simple_get("/b")
                + b"POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nxyz"
            )
            bodies = [(await connection.read_response()).body for _ in range(3)]
            assert bodies == [b"POST /a abcde", b"GET /b ", b"POST /c xyz"]
            await connection.aclose()


# -- a 500 keeps the connection -------------------------------------------------------------
def _error_router(clients: list[tuple[str, int] | None]) -> Router:
    async def boom(request: Request) -> Response:
        clients.append(request.client)
        raise RuntimeError("secret-detail-7f3a: database password is hunter2")

    async def whoami(request: Request) -> Response:
        clients.append(request.client)
        assert request.client is not None
        return Response.text(str(request.client[1]))

    return Router().get("/boom", boom).get("/whoami", whoami)


async def test_handler_exception_is_500_and_the_connection_is_reused() -> None:
    clients: list[tuple[str, int] | None] = []
    with trio.fail_after(10):
        async with serving(_error_router(clients)) as served:
            response, connection = await fetch(served.host, served.port, simple_get("/boom"))
            local_port = connection.local_port
            body = assert_error_body(response, 500)
            assert body["error"] == "Internal Server Error"
            assert b"secret" not in response.body
            assert b"hunter2" not in response.body
            assert b"RuntimeError" not in response.body
            assert not response.closes
            await connection.send(simple_get("/whoami"))
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == str(local_port).encode()
            await connection.aclose()
    assert len(clients) == 2
    assert clients[0] == clients[1]
    assert clients[0] is not None and clients[0][1] == local_port


async def test_handler_exception_with_httpx_reuses_the_connection() -> None:
    clients: list[tuple[str, int] | None] = []

    def two_requests(url: str) -> tuple[httpx.Response, httpx.Response]:
        with httpx.Client(base_url=url, timeout=5.0) as client:
            return client.get("/boom"), client.get("/whoami")

    with trio.fail_after(10):
        async with serving(_error_router(clients)) as served:
            first, second = await trio.to_thread.run_sync(two_requests, served.url)
    assert first.status_code == 500
    assert first.headers["content-type"].startswith("application/json")
    body = first.json()
    assert body["status"] == 500
    assert body["error"] == "Internal Server Error"
    assert "hunter2" not in first.text and "secret" not in first.text
    assert second.status_code == 200
    assert len(clients) == 2
    assert clients[0] == clients[1], "httpx had to open a second connection"


# -- client disconnect ----------------------------------------------------------------------
def _hanging_router(
    started: trio.Event, cancelled: trio.Event, release: trio.Event, completed: trio.Event
) -> Router:
    async def hang() -> Response:
        started.set()
        try:
            await release.wait()
            await trio.lowlevel.checkpoint()
        except trio.Cancelled:
            cancelled.set()
            raise
        completed.set()
        return Response.text("done")

    return Router().get("/hang", hang)


async def test_client_disconnect_cancels_the_handler() -> None:
    started, cancelled, release, completed = (trio.Event() for _ in range(4))
    router = _hanging_router(started, cancelled, release, completed)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/hang"))
            await started.wait()
            await connection.aclose()
            await cancelled.wait()
            assert not completed.is_set()
            release.set()


async def test_without_cancel_on_disconnect_the_handler_completes() -> None:
    started, cancelled, release, completed = (trio.Event() for _ in range(4))
    router = _hanging_router(started, cancelled, release, completed)
    with trio.fail_after(10):
        async with serving(router, ServerConfig(cancel_on_disconnect=False)) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/hang"))
            await started.wait()
            await connection.aclose()
            # The EOF is in the server's socket now; let the server react to it fully.
            await trio.testing.wait_all_tasks_blocked(cushion=0.05)
            assert not cancelled.is_set()
            release.set()
            await completed.wait()
            assert not cancelled.is_set()


async def test_client_disconnect_during_a_streamed_response_closes_the_iterator() -> None:
    first_chunk_sent = trio.Event()
    iterator_closed = trio.Event()
    live_streams: list[object] = []

    async def chunks() -> AsyncIterator[bytes]:
        try:
            yield b"first\n"
            first_chunk_sent.set()
            await trio.Event().wait()  # never: only closing ends this stream
            yield b"never\n"
        finally:
            iterator_closed.set()

    async def stream() -> Response:
        iterator = chunks()
        live_streams.append(iterator)  # the app keeps a reference to its stream
        return Response.stream(iterator)

    router = Router().get("/stream", stream)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/stream"))
            await first_chunk_sent.wait()
            await connection.aclose()
            with trio.move_on_after(5):
                await iterator_closed.wait()
            assert iterator_closed.is_set(), (
                "the client went away but the response iterator was never closed"
            )


# -- max_connections ------------------------------------------------------------------------
async def test_max_connections_holds_the_next_connection_while_all_are_busy() -> None:
    handled: list[int] = []
    release = trio.Event()

    async def whoami(request: Request) -> Response:
        assert request.client is not None
        handled.append(request.client[1])
        if request.path == "/busy":
            await release.wait()
        return Response.text(str(request.client[1]))

    router = Router().get("/", whoami).get("/busy", whoami)
    config = ServerConfig(max_connections=2, keep_alive_timeout=60.0, header_timeout=60.0)
    with trio.fail_after(10):
        async with serving(router, config) as served:
            c1 = await RawConnection.open(served.host, served.port)
            c2 = await RawConnection.open(served.host, served.port)
            await c1.send(simple_get("/busy"))
            await c2.send(simple_get("/busy"))
            c3 = await RawConnection.open(served.host, served.port)  # the kernel accepts it
            await c3.send(simple_get())
            await trio.testing.wait_all_tasks_blocked(cushion=0.1)
            assert handled == [c1.local_port, c2.local_port]  # the third waits
            release.set()
            assert (await c1.read_response()).status == 200
            assert (await c2.read_response()).status == 200
            third = await c3.read_response()
            assert third.status == 200
            assert third.body == str(c3.local_port).encode()
            await c3.aclose()


async def test_at_max_connections_the_longest_idle_connection_makes_room() -> None:
    # Slow keep-alive clients (one small request now and then) must not hold every slot: a
    # new client is served at once, and the connection idle the longest is the one closed.
    async def ok() -> Response:
        return Response.text("ok")

    router = Router().get("/", ok)
    config = ServerConfig(max_connections=2, keep_alive_timeout=60.0, header_timeout=60.0)
    with trio.fail_after(10):
        async with serving(router, config) as served:
            first, c1 = await fetch(served.host, served.port, simple_get())
            second, c2 = await fetch(served.host, served.port, simple_get())
            assert not first.closes and not second.closes
            with trio.fail_after(1):  # without eviction: until keep_alive_timeout (60 s)
                third, c3 = await fetch(served.host, served.port, simple_get())
            assert third.status == 200
            assert await c1.read_until_eof() == b""  # the oldest idle one was closed
            await c2.send(simple_get())  # the younger one still works
            assert (await c2.read_response()).status == 200
            for connection in (c1, c2, c3):
                await connection.aclose()


async def test_a_request_arriving_on_the_evicted_connection_is_answered_or_refused() -> None:
    # Eviction racing a request: the evicted client either sees its request answered (503
    # before the handler runs) or the connection closed with nothing read.
    calls = 0

    async def count() -> Response:
        nonlocal calls
        calls += 1
        return Response.text("ok")

    router = Router().get("/", count)
    config = ServerConfig(max_connections=1, keep_alive_timeout=60.0, header_timeout=60.0)
    with trio.fail_after(10):
        async with serving(router, config) as served:
            first, c1 = await fetch(served.host, served.port, simple_get())
            assert first.status == 200 and calls == 1
            c2 = await RawConnection.open(served.host, served.port)
            await c1.send(simple_get())  # races the eviction c2 causes
            await c2.send(simple_get())
            assert (await c2.read_response()).status == 200
            rest = await c1.read_until_eof()
            answered = rest.count(b"HTTP/1.1 200")
            assert calls == 2 + answered  # c2's request, and c1's second one only if answered
            assert rest == b"" or rest.startswith((b"HTTP/1.1 200", b"HTTP/1.1 503"))
            await c1.aclose()
            await c2.aclose()


# -- fairness -------------------------------------------------------------------------------
async def test_pipelined_requests_let_other_tasks_run_between_them() -> None:
    """Reads and writes that need no wait are no checkpoints: the request loop passes one
    per request, so a client that pipelines cannot hold the scheduler."""
    ticks = 0
    seen: list[int] = []

    async def tick_forever() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    async def count() -> Response:
        seen.append(ticks)
        return Response.text("ok")

    with trio.fail_after(10):
        async with serving(Router().get("/", count)) as served, trio.open_nursery() as nursery:
            nursery.start_soon(tick_forever)
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get() * 20)  # one write: the server reads it at once
            for _ in range(20):
                assert (await connection.read_response()).status == 200
            nursery.cancel_scope.cancel()
            await connection.aclose()
    assert len(seen) == 20
    # Without a checkpoint per request all 20 would be served in one step (equal counts).
    assert seen[-1] - seen[0] >= 10, seen


# -- the disconnect watcher -----------------------------------------------------------------
async def test_the_watcher_is_woken_only_when_the_exchange_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wakes: list[str] = []
    original = StreamReader.wake_watcher

    def counted(reader: StreamReader) -> None:
        wakes.append(current[0])
        original(reader)

    monkeypatch.setattr(StreamReader, "wake_watcher", counted)
    current = [""]

    async def instant() -> Response:
        return Response.text("instant")

    async def waits() -> Response:
        await trio.lowlevel.checkpoint()
        return Response.text("waits")

    router = Router().get("/instant", instant).get("/waits", waits)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            for path in ("/instant", "/waits", "/instant"):
                current[0] = path
                await connection.send(simple_get(path))
                assert (await connection.read_response()).status == 200
            await connection.aclose()
    assert wakes == ["/waits"]
