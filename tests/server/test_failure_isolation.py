"""One connection's failure never reaches the server: a failure injected at each stage of a
connection (reading, parsing, the app, serialising, writing, the body, the watcher, closing,
a WebSocket session) ends that connection only, logged once, and the next client is served.

Over real loopback sockets, because the bug this guards against made ``serve()`` itself exit.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import trio

from trioframe import Json, Response, Router, WebSocketConnection
from trioframe._app import App
from trioframe._server import state as state_module
from trioframe._server.http1 import connection as http1_module
from trioframe._server.http1 import exchange as http1_exchange_module
from trioframe._server.http1.reader import StreamReader
from trioframe._server.transport import Transport
from trioframe._server.websocket import ServerSession

from ..loopback._support import RawConnection, fetch, serving, simple_get

pytestmark = pytest.mark.loopback

#: Stands for the HTTP/1.1 adapter class the servers below use (h11's or llhttp's, as
#: ``http1_parser="auto"`` chooses under this test run: see tests/conftest.py).
ADAPTER = "the HTTP/1.1 adapter"


class Injected(RuntimeError):
    """The failure the tests inject."""


async def index() -> Response:
    return Response.text("ok")


async def waits() -> Response:
    await trio.lowlevel.checkpoint()  # blocks once: the watcher task starts
    return Response.text("ok")


async def echo(value: Json[dict[str, int]]) -> Response:
    return Response.json(value)


async def ws_echo(ws: WebSocketConnection) -> None:
    await ws.send_text("hi")


ROUTER = Router().get("/", index).get("/waits", waits).post("/echo", echo).websocket("/ws", ws_echo)


def fail_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Make ``owner.name`` raise ``Injected`` on its first call; returns the call counter."""
    original = getattr(owner, name)
    calls = [0]
    is_async = getattr(original, "__code__", None) is not None and bool(
        original.__code__.co_flags & 0x80
    )

    def check() -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise Injected(f"{name} failed")

    if is_async:

        async def failing_async(*args: Any, **kwargs: Any) -> Any:
            check()
            return await original(*args, **kwargs)

        monkeypatch.setattr(owner, name, failing_async)
    else:

        def failing(*args: Any, **kwargs: Any) -> Any:
            check()
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, failing)
    return calls


async def plain_get(url: str) -> None:
    async with httpx.AsyncClient() as client:
        await client.get(url + "/")


async def get_from_a_handler_that_blocks(url: str) -> None:
    async with httpx.AsyncClient() as client:
        await client.get(url + "/waits")


async def post_chunked_body(url: str) -> None:
    # A chunked body is read piece by piece (never taken whole, as an arrived
    # Content-Length body is).
    async def pieces() -> AsyncIterator[bytes]:
        yield b'{"a": 1}'

    async with httpx.AsyncClient() as client:
        await client.post(
            url + "/echo", content=pieces(), headers={"content-type": "application/json"}
        )


async def post_body(url: str) -> None:
    async with httpx.AsyncClient() as client:
        await client.post(url + "/echo", json={"a": 1})


async def raw_post_until_closed(url: str) -> None:
    # Reads until the server closes, so that the server (not the client) ends the connection.
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = await RawConnection.open(host, int(port))
    body = b'{"a": 1}'
    head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    await connection.send(head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await connection.read_until_eof()
    await connection.aclose()


async def websocket(url: str) -> None:
    from trio_websocket import open_websocket_url

    async with open_websocket_url(url.replace("http", "ws") + "/ws") as ws:
        await ws.get_message()


STAGES: list[tuple[str, Any, str, Callable[[str], Any]]] = [
    ("read", Transport, "receive_now", plain_get),
    ("parse", ADAPTER, "next_event", plain_get),
    ("app", App, "route", plain_get),
    ("serialise", ADAPTER, "send_whole", plain_get),
    ("body", ADAPTER, "_next_body_event", post_chunked_body),
    ("whole body", ADAPTER, "take_whole_body", post_body),
    ("watcher", StreamReader, "watch", get_from_a_handler_that_blocks),
    ("linger", http1_module, "linger_close", raw_post_until_closed),
    ("date", http1_exchange_module, "http_date", plain_get),
    ("websocket", ServerSession, "serve", websocket),
]


@pytest.mark.parametrize(
    ("stage", "owner", "name", "client"), STAGES, ids=[stage[0] for stage in STAGES]
)
async def test_a_failure_at_each_stage_ends_only_that_connection(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    stage: str,
    owner: Any,
    name: str,
    client: Callable[[str], Any],
) -> None:
    adapter = state_module.adapter_class("auto")
    if owner == ADAPTER:
        owner = adapter
    if stage == "linger":  # lingering happens after an error answer: make one
        fail_once(monkeypatch, adapter, "send_whole")
    calls = fail_once(monkeypatch, owner, name)
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            with contextlib.suppress(Exception):  # the failing connection: a 500 or a close
                await client(served.url)
            assert calls[0] >= 1, f"the {stage} stage was never reached"
            response, connection = await fetch(served.host, served.port, simple_get())
            assert response.status == 200
            assert response.body == b"ok"
            await connection.aclose()
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures, "the failure was not logged"
    assert any(isinstance(r.exc_info and r.exc_info[1], BaseException) for r in failures)


async def test_an_unsendable_stream_end_closes_only_that_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A streamed body shorter than the Content-Length the handler declared: the head is out,
    # so the connection is closed (the client sees a truncated body), and the server goes on.
    async def chunks() -> Any:
        yield b"abc"

    async def short_stream() -> Response:
        return Response.stream(chunks()).with_header("content-length", "10")

    router = Router().get("/", index).get("/short", short_stream)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/short"))
            raw = await connection.read_until_eof()
            assert raw.startswith(b"HTTP/1.1 200")
            assert raw.endswith(b"\r\n\r\nabc")
            await connection.aclose()
            response, again = await fetch(served.host, served.port, simple_get())
            assert response.status == 200
            await again.aclose()
    assert any("ended early" in r.getMessage() for r in caplog.records)
