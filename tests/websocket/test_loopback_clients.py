"""WebSocket routes over real loopback sockets, driven by two independent clients:
trio-websocket (trio, in this test's run) and the ``websockets`` library (its synchronous
client, in a worker thread)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio_websocket
import websockets.exceptions
import websockets.sync.client
from websockets.extensions.permessage_deflate import PerMessageDeflate

from trioframe import (
    Cookies,
    Headers,
    Message,
    Path,
    Query,
    Request,
    Response,
    Router,
    ServerConfig,
    State,
    WebSocketConnection,
)

from ..loopback._support import Served, serving

pytestmark = pytest.mark.loopback


# -- the app -----------------------------------------------------------------------------------
class Greeting:
    def __init__(self, word: str) -> None:
        self.word = word


async def echo(ws: WebSocketConnection) -> None:
    await ws.send_text("Welcome!")
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(f"Echo: {text}")
            case Message.Binary(data):
                await ws.send_bytes(data[::-1])
            case Message.Close():
                break


async def details(
    ws: WebSocketConnection,
    room: Path[str],
    query: Query[dict[str, str]],
    headers: Headers,
    jar: Cookies,
    greeting: State[Greeting],
) -> None:
    await ws.send_json(
        {
            "room": room,
            "query": query,
            "agent": headers.get("x-agent"),
            "sid": jar.get("sid"),
            "greeting": greeting.word,
            "subprotocol": ws.subprotocol,
        }
    )


async def failing(ws: WebSocketConnection) -> None:
    await ws.send_text("about to fail")
    raise RuntimeError("handler bug")


async def returning(ws: WebSocketConnection) -> None:
    await ws.send_text("done")


async def waiting(ws: WebSocketConnection) -> None:
    await ws.send_text("ready")
    async for message in ws:
        if isinstance(message, Message.Close):
            await ws.send_text("never sent")  # the connection is closing: WebSocketClosed


async def guard(request: Request, next: Callable[[Request], Awaitable[Response]]) -> Response:
    if request.uri.path.startswith("/private") and request.header("authorization") is None:
        return Response.error(401, "log in first")
    return await next(request)


def app() -> Router:
    return (
        Router()
        .middleware(guard)
        .state(Greeting("hello"))
        .websocket("/ws", echo)
        .websocket("/rooms/{room}", details, subprotocols=["chat.v2", "chat.v1"])
        .websocket("/private/ws", echo)
        .websocket("/fail", failing)
        .websocket("/return", returning)
        .websocket("/wait", waiting)
    )


def ws_url(served: Served, path: str) -> str:
    return f"ws://{served.host}:{served.port}{path}"


async def in_thread(function: Callable[[], Any]) -> Any:
    return await trio.to_thread.run_sync(function)


def sync_connect(url: str, **kwargs: Any) -> websockets.sync.client.ClientConnection:
    connection: websockets.sync.client.ClientConnection = websockets.sync.client.connect(
        url, proxy=None, open_timeout=5, **kwargs
    )
    return connection


# -- trio-websocket --------------------------------------------------------------------------
@asynccontextmanager
async def trio_ws(path: str) -> AsyncIterator[trio_websocket.WebSocketConnection]:
    """The app on a loopback port and one trio-websocket connection to ``path``."""
    async with (
        serving(app()) as served,
        trio_websocket.open_websocket_url(ws_url(served, path)) as ws,
    ):
        yield ws


def close_code(closed: trio_websocket.ConnectionClosed) -> int | None:
    return closed.reason.code if closed.reason else None


async def test_trio_websocket_echo_text_and_binary() -> None:
    with trio.fail_after(10):
        async with serving(app()) as served:
            async with trio_websocket.open_websocket_url(ws_url(served, "/ws")) as ws:
                assert await ws.get_message() == "Welcome!"
                for text in ["one", "two", "ünïcode ✓", ""]:
                    await ws.send_message(text)
                    assert await ws.get_message() == f"Echo: {text}"
                await ws.send_message(b"\x00\x01\x02")
                assert await ws.get_message() == b"\x02\x01\x00"
            assert ws.closed is not None
            assert ws.closed.code == 1000


async def test_trio_websocket_subprotocol_and_extractors() -> None:
    headers = [(b"x-agent", b"trio-websocket"), (b"cookie", b"sid=abc")]
    with trio.fail_after(10):
        async with serving(app()) as served:
            url = ws_url(served, "/rooms/lobby?x=1&y=two")
            async with trio_websocket.open_websocket_url(
                url, subprotocols=["chat.v1", "chat.v2"], extra_headers=headers
            ) as ws:
                assert ws.subprotocol == "chat.v2"  # the route's preference wins
                assert json.loads(await ws.get_message()) == {
                    "room": "lobby",
                    "query": {"x": "1", "y": "two"},
                    "agent": "trio-websocket",
                    "sid": "abc",
                    "greeting": "hello",
                    "subprotocol": "chat.v2",
                }


async def test_trio_websocket_sees_1011_when_the_handler_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(10), caplog.at_level(logging.ERROR, logger="trioframe"):
        async with trio_ws("/fail") as ws:
            assert await ws.get_message() == "about to fail"
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                await ws.get_message()
            assert close_code(closed.value) == 1011
    assert "WebSocket handler failed" in caplog.text
    assert "handler bug" in caplog.text


async def test_trio_websocket_sees_1000_when_the_handler_returns() -> None:
    with trio.fail_after(10):
        async with trio_ws("/return") as ws:
            assert await ws.get_message() == "done"
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                await ws.get_message()
            assert close_code(closed.value) == 1000


async def test_trio_websocket_rejections() -> None:
    with trio.fail_after(10):
        async with serving(app()) as served:
            with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
                async with trio_websocket.open_websocket_url(ws_url(served, "/private/ws")):
                    pytest.fail("the middleware let the upgrade through")
            assert rejected.value.status_code == 401
            assert rejected.value.body is not None
            body = json.loads(rejected.value.body)
            assert body == {"status": 401, "error": "Unauthorized", "message": "log in first"}
            with pytest.raises(trio_websocket.ConnectionRejected) as missing:
                async with trio_websocket.open_websocket_url(ws_url(served, "/nowhere")):
                    pytest.fail("an unknown path was upgraded")
            assert missing.value.status_code == 404
            headers = [(b"authorization", b"Bearer x")]
            url = ws_url(served, "/private/ws")
            async with trio_websocket.open_websocket_url(url, extra_headers=headers) as ws:
                assert await ws.get_message() == "Welcome!"


async def test_trio_websocket_server_shutdown_closes_with_1001() -> None:
    with trio.fail_after(10):
        async with (
            serving(app()) as served,
            trio_websocket.open_websocket_url(ws_url(served, "/wait")) as ws,
        ):
            assert await ws.get_message() == "ready"
            served.server.shutdown()
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                await ws.get_message()
            assert closed.value.reason is not None
            assert (closed.value.reason.code, closed.value.reason.reason) == (
                1001,
                "server shutting down",
            )


# -- websockets (sync client in a thread) ----------------------------------------------------
async def test_websockets_echo_and_close_from_the_client() -> None:
    def talk(url: str) -> tuple[list[str | bytes], int | None]:
        with sync_connect(url) as ws:
            received = [ws.recv(timeout=5)]
            ws.send("hello")
            received.append(ws.recv(timeout=5))
            ws.send(b"abc")
            received.append(ws.recv(timeout=5))
            ws.close(4001, "bye")
            rcvd = ws.protocol.close_rcvd
            return received, rcvd.code if rcvd else None

    with trio.fail_after(15):
        async with serving(app()) as served:
            received, code = await in_thread(lambda: talk(ws_url(served, "/ws")))
    assert received == ["Welcome!", "Echo: hello", b"cba"]
    assert code == 4001  # the server answers the client's Close with the same code


async def test_websockets_subprotocol_and_extractors() -> None:
    def talk(url: str) -> tuple[str | None, str | bytes]:
        headers = {"x-agent": "websockets", "cookie": "sid=xyz"}
        with sync_connect(url, subprotocols=["chat.v1"], additional_headers=headers) as ws:
            return ws.subprotocol, ws.recv(timeout=5)

    with trio.fail_after(15):
        async with serving(app()) as served:
            chosen, raw = await in_thread(lambda: talk(ws_url(served, "/rooms/kitchen")))
    assert chosen == "chat.v1"
    assert json.loads(raw) == {
        "room": "kitchen",
        "query": {},
        "agent": "websockets",
        "sid": "xyz",
        "greeting": "hello",
        "subprotocol": "chat.v1",
    }


async def test_websockets_rejected_upgrade_has_the_error_body() -> None:
    def attempt(url: str) -> websockets.exceptions.InvalidStatus:
        try:
            sync_connect(url).close()
        except websockets.exceptions.InvalidStatus as rejected:
            return rejected
        raise AssertionError("the upgrade was accepted")

    with trio.fail_after(15):
        async with serving(app()) as served:
            rejected = await in_thread(lambda: attempt(ws_url(served, "/private/ws")))
    assert rejected.response.status_code == 401
    body = json.loads(rejected.response.body or b"")
    assert body["message"] == "log in first"


async def test_websockets_sees_1011_and_1001() -> None:
    def failing_code(url: str) -> int | None:
        with sync_connect(url) as ws:
            assert ws.recv(timeout=5) == "about to fail"
            with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                ws.recv(timeout=5)
            return closed.value.rcvd.code if closed.value.rcvd else None

    with trio.fail_after(15):
        async with serving(app()) as served:
            assert await in_thread(lambda: failing_code(ws_url(served, "/fail"))) == 1011
            assert await in_thread(lambda: shutdown_code(served)) == 1001


def shutdown_code(served: Served) -> int | None:
    """In the client thread: wait for the handler's greeting, shut the server down from the
    trio side, then read until the server's Close."""
    with sync_connect(ws_url(served, "/wait")) as ws:
        assert ws.recv(timeout=5) == "ready"
        trio.from_thread.run_sync(served.server.shutdown)
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            ws.recv(timeout=5)
        return closed.value.rcvd.code if closed.value.rcvd else None


@pytest.mark.parametrize("enabled", [False, True])
async def test_websockets_permessage_deflate_only_when_enabled(enabled: bool) -> None:
    def talk(url: str) -> tuple[list[str], str | bytes]:
        with sync_connect(url) as ws:  # websockets offers permessage-deflate by default
            names = [type(extension).__name__ for extension in ws.protocol.extensions]
            ws.recv(timeout=5)
            ws.send("x" * 5000)
            return names, ws.recv(timeout=5)

    config = ServerConfig(websocket_compression=enabled)
    with trio.fail_after(15):
        async with serving(app(), config) as served:
            names, echoed = await in_thread(lambda: talk(ws_url(served, "/ws")))
    assert names == ([PerMessageDeflate.__name__] if enabled else [])
    assert echoed == "Echo: " + "x" * 5000


# -- plain HTTP on a WebSocket route ---------------------------------------------------------
async def test_plain_get_is_426_and_a_bad_handshake_is_400() -> None:
    with trio.fail_after(10):
        async with serving(app()) as served, httpx.AsyncClient(base_url=served.url) as client:
            plain = await client.get("/ws")
            assert plain.status_code == 426
            assert plain.headers["upgrade"] == "websocket"
            assert plain.json()["status"] == 426
            bad_key = await client.get(
                "/ws",
                headers={
                    "connection": "Upgrade",
                    "upgrade": "websocket",
                    "sec-websocket-version": "13",
                    "sec-websocket-key": "not base64 of 16 bytes",
                },
            )
            assert bad_key.status_code == 400
            assert bad_key.json()["error"] == "Bad Request"
            # the server keeps serving on the same port
            async with trio_websocket.open_websocket_url(ws_url(served, "/ws")) as ws:
                assert await ws.get_message() == "Welcome!"


async def test_allowed_origins_refuse_other_sites_with_403() -> None:
    config = ServerConfig(websocket_allowed_origins=("https://app.example",))

    async def open_from(served: Served, origin: bytes) -> str:
        headers = [(b"origin", origin)]
        url = ws_url(served, "/ws")
        async with trio_websocket.open_websocket_url(url, extra_headers=headers) as ws:
            return str(await ws.get_message())

    with trio.fail_after(10):
        async with serving(app(), config) as served:
            assert await open_from(served, b"https://app.example") == "Welcome!"
            with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
                await open_from(served, b"https://evil.example")
            assert rejected.value.status_code == 403
            assert json.loads(rejected.value.body or b"")["status"] == 403
