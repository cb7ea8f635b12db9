"""Writes on a real TCP socket, where a frame the socket takes whole goes out without waiting
and only a write that has to wait starts the session's send watchdog: a peer that stops
reading still hits ``send_timeout``."""

from __future__ import annotations

import trio

from trioframe import Router, ServerConfig, WebSocketClosed, WebSocketConnection

from ..loopback._support import serving
from ._raw_client import TEXT, WsClient, frame


async def test_a_peer_that_stops_reading_hits_the_send_timeout() -> None:
    failures: list[tuple[int, str]] = []
    done = trio.Event()

    async def flood(ws: WebSocketConnection) -> None:
        await ws.recv()
        try:
            while True:
                await ws.send_bytes(b"\x00" * 16384)
        except WebSocketClosed as closed:
            failures.append((closed.code, closed.reason))
        done.set()

    config = ServerConfig().with_send_timeout(0.5)
    router = Router().websocket("/echo", flood)
    async with serving(router, config) as served, WsClient.connect(served) as client:
        await client.send(frame(TEXT, b"go"))  # and never read again
        with trio.fail_after(30):  # a bound for a broken build, not a measurement
            await done.wait()
    assert failures == [(1006, "send timed out")]


async def test_writes_the_socket_takes_whole_start_no_watchdog() -> None:
    tasks: list[int] = []

    async def echo_three(ws: WebSocketConnection) -> None:
        for _ in range(3):
            message = await ws.recv()
            await ws.send_text(getattr(message, "text", ""))
        tasks.append(len(trio.lowlevel.current_task().parent_nursery.child_tasks))

    router = Router().websocket("/echo", echo_three)
    async with serving(router, ServerConfig()) as served, WsClient.connect(served) as client:
        for text in ("a", "b", "c"):
            await client.assert_echoes(text)
    assert tasks == [3]  # the handler, the reader and the keep-alive: no watchdog
