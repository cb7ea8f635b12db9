"""Embedding the server in an application's own nursery: bound addresses, address forms,
bind errors, ``trioframe()`` and graceful ``shutdown()``."""

from __future__ import annotations

import logging
import socket

import pytest
import trio
import trio.testing

from trioframe import Response, Router, Server

from ._support import RawConnection, fetch, simple_get

pytestmark = pytest.mark.loopback


async def index() -> Response:
    return Response.text("embedded")


ROUTER = Router().get("/", index)


def _ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


async def _serve_and_check(server: Server, *, method: str = "serve") -> list[tuple[str, int]]:
    """Start ``server`` via ``nursery.start``, make one request, shut down, and check that
    the serving method returned ``None`` by itself."""
    results: list[object] = []

    async def run(*, task_status: trio.TaskStatus[list[tuple[str, int]]]) -> None:
        results.append(await getattr(server, method)(task_status=task_status))

    async with trio.open_nursery() as nursery:
        addresses = await nursery.start(run)
        assert isinstance(addresses, list) and addresses
        host, port = addresses[0]
        response, connection = await fetch(host, port, simple_get())
        assert response.status == 200
        assert response.body == b"embedded"
        await connection.aclose()
        server.shutdown()
    assert results == [None]  # serve() returned (not cancelled) after the graceful shutdown
    return addresses


async def test_nursery_start_returns_the_bound_address() -> None:
    with trio.fail_after(10):
        addresses = await _serve_and_check(Server(ROUTER, "127.0.0.1:0"))
        assert len(addresses) == 1
        [(host, port)] = addresses
        assert host == "127.0.0.1"
        assert isinstance(port, int) and port > 0


async def test_tuple_address_form() -> None:
    with trio.fail_after(10):
        [(host, port)] = await _serve_and_check(Server(ROUTER, ("127.0.0.1", 0)))
        assert host == "127.0.0.1" and port > 0


async def test_trioframe_method_serves_like_serve() -> None:
    with trio.fail_after(10):
        [(host, port)] = await _serve_and_check(Server(ROUTER, "127.0.0.1:0"), method="trioframe")
        assert host == "127.0.0.1" and port > 0


@pytest.mark.skipif(not _ipv6_loopback_available(), reason="::1 cannot be bound on this machine")
async def test_ipv6_loopback_address() -> None:
    with trio.fail_after(10):
        [(host, port)] = await _serve_and_check(Server(ROUTER, "[::1]:0"))
        assert host == "::1" and port > 0


async def test_port_in_use_raises_oserror_from_serve() -> None:
    with trio.fail_after(10):
        first = Server(ROUTER, "127.0.0.1:0")
        async with trio.open_nursery() as nursery:
            [(_host, port)] = await nursery.start(first.serve)
            second = Server(ROUTER, f"127.0.0.1:{port}")
            with pytest.raises(OSError):
                await second.serve()
            with pytest.raises(OSError):
                await nursery.start(second.serve)
            # The first server is unaffected.
            response, connection = await fetch("127.0.0.1", port, simple_get())
            assert response.status == 200
            await connection.aclose()
            first.shutdown()


async def test_shutdown_closes_idle_keep_alive_connections_and_refuses_new_ones() -> None:
    with trio.fail_after(10):
        server = Server(ROUTER, "127.0.0.1:0")
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            response, connection = await fetch(host, port, simple_get())
            assert response.status == 200 and not response.closes
            server.shutdown()
            assert await connection.read_until_eof() == b""  # idle: closed at once
            await connection.aclose()
        with pytest.raises(OSError):
            await trio.open_tcp_stream(host, port)


async def test_shutdown_lets_an_in_flight_request_finish_with_connection_close() -> None:
    entered = trio.Event()
    release = trio.Event()

    async def slow() -> Response:
        entered.set()
        await release.wait()
        return Response.text("finished")

    router = Router().get("/slow", slow)
    with trio.fail_after(10):
        server = Server(router, "127.0.0.1:0")
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            connection = await RawConnection.open(host, port)
            await connection.send(simple_get("/slow"))
            await entered.wait()
            server.shutdown()
            await trio.testing.wait_all_tasks_blocked()
            # No new connection is accepted while the request is still in flight.
            with pytest.raises(OSError):
                await trio.open_tcp_stream(host, port)
            release.set()
            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"finished"
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "during-a-request"])
async def test_cancelling_serve_closes_its_listening_socket(
    monkeypatch: pytest.MonkeyPatch, busy: bool
) -> None:
    # Closed by serve() itself, not left to the garbage collector: the test keeps references
    # to the listeners (as a traceback or a debugger would), and they must be closed anyway.
    opened: list[trio.SocketListener] = []
    open_listeners = trio.open_tcp_listeners

    async def keep(*args: object, **kwargs: object) -> list[trio.SocketListener]:
        opened.extend(await open_listeners(*args, **kwargs))  # type: ignore[arg-type]
        return opened

    monkeypatch.setattr(trio, "open_tcp_listeners", keep)
    entered = trio.Event()

    async def slow() -> Response:
        entered.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    server = Server(Router().get("/", index).get("/slow", slow), "127.0.0.1:0")
    connection: RawConnection | None = None
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            if busy:
                connection = await RawConnection.open(host, port)
                await connection.send(simple_get("/slow"))
                await entered.wait()
            nursery.cancel_scope.cancel()
        assert opened and all(listener.socket.fileno() == -1 for listener in opened)
        with pytest.raises(OSError):
            await trio.open_tcp_stream(host, port)
        if connection is not None:
            await connection.aclose()


async def test_handle_stream_with_an_already_closed_socket_stream_ends_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    left, right = socket.socketpair()
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(left))
    await stream.aclose()
    with trio.fail_after(5):
        await Server(Router()).handle_stream(stream, None)
    right.close()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
