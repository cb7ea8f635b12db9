"""Graceful shutdown under load, over loopback: every request a handler ran for got its
response. Keep-alive clients loop until their connection is closed; shutdown begins once the
server has answered a fixed number of requests. (The deterministic version of the race this
catches is in tests/server/test_shutdown_race.py; this is the same promise with real sockets.)
"""

from __future__ import annotations

import pytest
import trio

from tests.loopback._support import RawConnection, simple_get
from trioframe import Response, Router, Server

pytestmark = pytest.mark.loopback

CLIENTS = 20
REQUESTS_BEFORE_SHUTDOWN = 1500


async def test_every_request_handled_during_shutdown_is_answered() -> None:
    handled = 0
    answered = 0
    refused = 0
    enough = trio.Event()

    async def count() -> Response:
        nonlocal handled
        handled += 1
        if handled >= REQUESTS_BEFORE_SHUTDOWN:
            enough.set()
        return Response.text("ok")

    server = Server(Router().get("/", count), "127.0.0.1:0")

    async def client(host: str, port: int) -> None:
        nonlocal answered, refused
        try:
            connection = await RawConnection.open(host, port)
        except OSError:
            return  # the listener is already closed
        try:
            while True:
                await connection.send(simple_get())
                response = await connection.read_response()
                if response.status == 200:
                    answered += 1
                else:
                    assert response.status == 503
                    refused += 1
                if response.closes:
                    return
        except (EOFError, trio.BrokenResourceError):
            return  # closed between requests, before any byte of the next one was read
        finally:
            await connection.aclose()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            async with trio.open_nursery() as clients:
                for _ in range(CLIENTS):
                    clients.start_soon(client, host, port)
                await enough.wait()
                server.shutdown()
    assert handled >= REQUESTS_BEFORE_SHUTDOWN
    assert answered == handled, f"{handled - answered} handled requests were never answered"
