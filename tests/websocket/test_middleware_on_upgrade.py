"""Middleware on WebSocket routes runs on the upgrade request: ``next`` returns the 101 as soon
as the upgrade is accepted, so the built-ins see a short request and leave the session alone."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from trioframe import Router, WebSocketConnection
from trioframe.middleware import LoggerMiddleware, TimeoutMiddleware
from trioframe.testing import TestClient


async def slow_greeting(ws: WebSocketConnection) -> None:
    await trio.sleep(15)  # under the keep-alive interval: no ping first
    await ws.send_text("still here")
    await ws.recv()


async def test_a_timeout_middleware_bounds_only_the_handshake(
    autojump_clock: trio.testing.MockClock,
) -> None:
    router = Router().middleware(TimeoutMiddleware(5)).websocket("/ws", slow_greeting)
    async with TestClient(router) as client, client.websocket("/ws") as ws:
        assert await ws.receive_text() == "still here"  # 15 s in, past the 5 s deadline


async def test_the_access_log_records_the_upgrade_as_101(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def greet(ws: WebSocketConnection) -> None:
        await ws.send_text("hi")

    router = Router().middleware(LoggerMiddleware()).websocket("/ws", greet)
    with caplog.at_level(logging.INFO, logger="trioframe.access"):
        async with TestClient(router) as client, client.websocket("/ws") as ws:
            assert await ws.receive_text() == "hi"
    [record] = [r for r in caplog.records if r.name == "trioframe.access"]
    assert (record.method, record.path, record.status) == ("GET", "/ws", 101)  # type: ignore[attr-defined]
