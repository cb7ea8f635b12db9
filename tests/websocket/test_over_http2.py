"""WebSocket over HTTP/2 (RFC 8441): an extended CONNECT on a stream reaches the same
WebSocket routes as an HTTP/1.1 upgrade, answered 200 with no key material, and the session
runs over the stream's DATA frames. The client is h2 (client side) plus wsproto's frame layer,
over an in-memory connection to the server's own connection code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import h2.config
import h2.connection
import h2.events
import trio
import trio.testing
from wsproto.connection import Connection, ConnectionType
from wsproto.events import CloseConnection, TextMessage

from trioframe import Message, Request, Router, Server, ServerConfig, WebSocketConnection

ENABLE_CONNECT_PROTOCOL = 0x8


class H2Client:
    """One HTTP/2 client connection over an in-memory stream."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.h2.initiate_connection()
        self.pending: list[Any] = []

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            await self.stream.send_all(data)

    async def next_event(self) -> Any:
        """The next h2 event (data is acknowledged at once); ``None`` at the end."""
        while not self.pending:
            data = await self.stream.receive_some()
            if not data:
                return None
            self.pending += self.h2.receive_data(data)
            for event in self.pending:
                if isinstance(event, h2.events.DataReceived):
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            await self.flush()
        return self.pending.pop(0)

    async def until(self, kind: type[Any]) -> Any:
        while True:
            event = await self.next_event()
            assert event is not None, f"connection ended before {kind.__name__}"
            if isinstance(event, kind):
                return event

    async def connect(self, path: bytes, *extra: tuple[bytes, bytes], stream_id: int = 1) -> Any:
        """Send an extended CONNECT for a WebSocket; the response event."""
        headers = [
            (b":method", b"CONNECT"),
            (b":protocol", b"websocket"),
            (b":scheme", b"http"),
            (b":path", path),
            (b":authority", b"testserver"),
            (b"sec-websocket-version", b"13"),
            *extra,
        ]
        self.h2.send_headers(stream_id, headers)
        await self.flush()
        return await self.until(h2.events.ResponseReceived)


@asynccontextmanager
async def serving(router: Router, config: ServerConfig | None = None) -> AsyncIterator[H2Client]:
    server = Server(router, ("127.0.0.1", 0), (config or ServerConfig()).with_http2())
    async with trio.open_nursery() as nursery:
        client_end, server_end = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle_stream, server_end, ("127.0.0.1", 50000))
        client = H2Client(client_end)
        await client.flush()
        await client.until(h2.events.RemoteSettingsChanged)
        yield client
        nursery.cancel_scope.cancel()


async def websocket_messages(client: H2Client, ws: Connection, count: int) -> list[Any]:
    """The next ``count`` WebSocket events from stream 1."""
    events: list[Any] = []
    while len(events) < count:
        event = await client.until(h2.events.DataReceived)
        ws.receive_data(event.data)
        events += list(ws.events())
    return events


async def echo(ws: WebSocketConnection) -> None:
    await ws.send_text("Welcome!")
    while (message := await ws.recv()) is not None:
        if isinstance(message, Message.Text):
            await ws.send_text(f"echo: {message.text}")


def echo_router() -> Router:
    return Router().websocket("/ws", echo, subprotocols=["chat"]).get("/plain", plain)


async def plain() -> str:
    return "plain"


def status(event: Any) -> int:
    return int(dict(event.headers)[b":status"])


async def test_the_server_announces_extended_connect() -> None:
    async with serving(echo_router()) as client:
        assert client.h2.remote_settings.get(ENABLE_CONNECT_PROTOCOL) == 1


async def test_a_websocket_route_answers_an_extended_connect_and_echoes() -> None:
    async with serving(echo_router()) as client:
        response = await client.connect(b"/ws")
        headers = dict(response.headers)
        assert headers[b":status"] == b"200"
        # no key material and no hop-by-hop fields over HTTP/2
        assert b"sec-websocket-accept" not in headers and b"upgrade" not in headers
        ws = Connection(ConnectionType.CLIENT)
        [welcome] = await websocket_messages(client, ws, 1)
        assert welcome == TextMessage(data="Welcome!")
        client.h2.send_data(1, ws.send(TextMessage(data="hi")))
        await client.flush()
        [answer] = await websocket_messages(client, ws, 1)
        assert answer == TextMessage(data="echo: hi")
        client.h2.send_data(1, ws.send(CloseConnection(code=1000)))
        await client.flush()
        [closed] = await websocket_messages(client, ws, 1)
        assert isinstance(closed, CloseConnection) and closed.code == 1000


async def test_the_subprotocol_is_chosen_as_over_http1() -> None:
    async with serving(echo_router()) as client:
        response = await client.connect(b"/ws", (b"sec-websocket-protocol", b"other, chat"))
        assert dict(response.headers)[b"sec-websocket-protocol"] == b"chat"


async def test_a_subprotocol_mismatch_is_400_on_the_stream() -> None:
    async with serving(echo_router()) as client:
        response = await client.connect(b"/ws", (b"sec-websocket-protocol", b"other"))
        assert status(response) == 400


async def test_an_unsupported_version_is_426() -> None:
    async with serving(echo_router()) as client:
        headers = [
            (b":method", b"CONNECT"),
            (b":protocol", b"websocket"),
            (b":scheme", b"http"),
            (b":path", b"/ws"),
            (b":authority", b"testserver"),
            (b"sec-websocket-version", b"8"),
        ]
        client.h2.send_headers(1, headers)
        await client.flush()
        response = await client.until(h2.events.ResponseReceived)
        assert status(response) == 426
        assert dict(response.headers)[b"sec-websocket-version"] == b"13"


async def test_a_disallowed_origin_is_403() -> None:
    config = ServerConfig(websocket_allowed_origins=["https://good.example"])
    async with serving(echo_router(), config) as client:
        response = await client.connect(b"/ws", (b"origin", b"https://evil.example"))
        assert status(response) == 403


async def test_other_streams_keep_working_beside_a_websocket() -> None:
    async with serving(echo_router()) as client:
        await client.connect(b"/ws")
        ws = Connection(ConnectionType.CLIENT)
        await websocket_messages(client, ws, 1)
        client.h2.send_headers(
            3,
            [
                (b":method", b"GET"),
                (b":scheme", b"http"),
                (b":path", b"/plain"),
                (b":authority", b"testserver"),
            ],
            end_stream=True,
        )
        await client.flush()
        response = await client.until(h2.events.ResponseReceived)
        assert response.stream_id == 3 and status(response) == 200
        body = await client.until(h2.events.DataReceived)
        assert body.stream_id == 3 and body.data == b"plain"


async def test_extended_connect_to_a_plain_route_is_refused() -> None:
    async with serving(echo_router()) as client:
        response = await client.connect(b"/plain")
        assert status(response) == 405


async def test_a_reset_stream_closes_the_session_and_the_handler_sees_it() -> None:
    seen: list[Any] = []
    finished = trio.Event()

    async def watch(ws: WebSocketConnection) -> None:
        await ws.send_text("ready")
        try:
            seen.append(await ws.recv())
        finally:
            finished.set()

    async with serving(Router().websocket("/ws", watch)) as client:
        await client.connect(b"/ws")
        await websocket_messages(client, Connection(ConnectionType.CLIENT), 1)
        client.h2.reset_stream(1)
        await client.flush()
        with trio.fail_after(5):
            await finished.wait()
    # the handler was not cancelled: it got the end of the connection as a Close (1006)
    assert len(seen) == 1 and isinstance(seen[0], Message.Close) and seen[0].code == 1006


async def test_a_handler_taking_the_request_sees_an_empty_body_and_the_tunnel_intact() -> None:
    """The extended CONNECT's stream carries the WebSocket's frames, not a request body: the
    ``Request`` a handler takes reads as ``b""`` (even when asked to read), and the frames
    the client sends after it still reach the session."""

    async def handler(ws: WebSocketConnection, request: Request) -> None:
        body = await request.read_body()
        await ws.send_json(
            {
                "body": body.decode(),
                "token": request.header("x-token"),
                "sid": request.cookie("sid"),
            }
        )
        message = await ws.recv()
        assert isinstance(message, Message.Text)
        await ws.send_text(f"echo: {message.text}")

    with trio.fail_after(5):
        async with serving(Router().websocket("/ws", handler)) as client:
            ws = Connection(ConnectionType.CLIENT)
            client.h2.send_headers(
                1,
                [
                    (b":method", b"CONNECT"),
                    (b":protocol", b"websocket"),
                    (b":scheme", b"http"),
                    (b":path", b"/ws"),
                    (b":authority", b"testserver"),
                    (b"sec-websocket-version", b"13"),
                    (b"x-token", b"t2"),
                    (b"cookie", b"sid=abc"),
                ],
            )
            client.h2.send_data(1, ws.send(TextMessage(data="hi")))  # right behind the head
            await client.flush()
            assert status(await client.until(h2.events.ResponseReceived)) == 200
            first, second = await websocket_messages(client, ws, 2)
            assert first == TextMessage(data='{"body":"","token":"t2","sid":"abc"}')
            assert second == TextMessage(data="echo: hi")


async def test_messages_sent_with_the_close_are_all_answered_before_the_reply() -> None:
    """Three messages and the Close in one DATA frame: three echoes, then the Close reply
    (the same session as over HTTP/1.1, over the stream's DATA frames)."""
    with trio.fail_after(5):
        async with serving(echo_router()) as client:
            await client.connect(b"/ws")
            ws = Connection(ConnectionType.CLIENT)
            assert await websocket_messages(client, ws, 1) == [TextMessage(data="Welcome!")]
            frames = [ws.send(TextMessage(data=text)) for text in ("a", "b", "c")]
            client.h2.send_data(1, b"".join(frames) + ws.send(CloseConnection(code=1000)))
            await client.flush()
            assert await websocket_messages(client, ws, 4) == [
                TextMessage(data="echo: a"),
                TextMessage(data="echo: b"),
                TextMessage(data="echo: c"),
                CloseConnection(code=1000, reason=""),
            ]
