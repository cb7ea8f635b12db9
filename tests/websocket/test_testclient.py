"""``TestClient.websocket``: the in-memory WebSocket test client, against real WebSocket
routes, and against a scripted wsproto peer for what a trioframe server never does (split a
message into frames, send a ping, ignore a Close, drop the connection)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from wsproto import WSConnection
from wsproto import events as ev
from wsproto.connection import ConnectionState, ConnectionType

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
    WebSocketConnection,
)
from trioframe.testing import (
    TestClient,
    TestHttpClient,
    WebSocketDisconnected,
    WebSocketRejected,
    WebSocketTestSession,
)

# -- handlers -------------------------------------------------------------------------------


async def echo(ws: WebSocketConnection) -> None:
    await ws.send_text("Welcome!")
    async for msg in ws:
        match msg:
            case Message.Text(text):
                await ws.send_text(f"Echo: {text}")
            case Message.Binary(data):
                await ws.send_bytes(data)
            case Message.Close():
                break


async def json_echo(ws: WebSocketConnection) -> None:
    async for msg in ws:
        if isinstance(msg, Message.Text):
            await ws.send_json({"got": msg.text})


async def who(ws: WebSocketConnection) -> None:
    await ws.send_json({"subprotocol": ws.subprotocol})


async def close_with_4000(ws: WebSocketConnection) -> None:
    await ws.send_text("bye soon")
    await ws.close(4000, "done")


async def failing(ws: WebSocketConnection) -> None:
    await ws.send_text("about to fail")
    raise RuntimeError("handler bug")


async def room(ws: WebSocketConnection, name: Path[str], query: Query[dict[str, str]]) -> None:
    await ws.send_json({"room": name, "query": query})


async def cookies(ws: WebSocketConnection, jar: Cookies) -> None:
    await ws.send_json({"sid": jar.get("sid"), "theme": jar.get("theme")})


async def headers(ws: WebSocketConnection, received: Headers) -> None:
    await ws.send_json({"origin": received.get("origin"), "x-token": received.get("x-token")})


async def login() -> Response:
    return Response.text("ok").with_header("set-cookie", "sid=from-login; Path=/")


async def deny(request: Request, next: Callable[[Request], Awaitable[Response]]) -> Response:
    if request.header("authorization") != "Bearer good":
        return Response.error(401, "missing or bad token")
    return await next(request)


@asynccontextmanager
async def client_for(router: Router, config: ServerConfig | None = None) -> AsyncIterator[Any]:
    async with TestClient(router, config) as client:
        with trio.fail_after(30):  # a broken test fails instead of hanging
            yield client


# -- the real server -------------------------------------------------------------------------


async def test_client_type() -> None:
    async with TestClient(Router()) as client:
        assert isinstance(client, TestHttpClient)
        assert isinstance(client, httpx.AsyncClient)


async def test_welcome_and_echo_round_trips() -> None:
    async with client_for(Router().websocket("/ws", echo)) as client:
        async with client.websocket("/ws") as ws:
            assert isinstance(ws, WebSocketTestSession)
            assert await ws.receive_text() == "Welcome!"
            await ws.send_text("hi")
            assert await ws.receive_text() == "Echo: hi"
            await ws.send_bytes(b"\x00\x01")
            assert await ws.receive_bytes() == b"\x00\x01"
            await ws.send_text("é" * 70_000)  # several reads and frames
            assert await ws.receive() == Message.Text("Echo: " + "é" * 70_000)
            assert ws.subprotocol is None
            assert ws.response_headers["upgrade"].lower() == "websocket"
            assert "sec-websocket-accept" in ws.response_headers
        assert ws.close_code == 1000


async def test_json_round_trip() -> None:
    async with (
        client_for(Router().websocket("/json", json_echo)) as client,
        client.websocket("/json") as ws,
    ):
        await ws.send_json({"a": [1, 2]})
        assert await ws.receive_json() == {"got": '{"a": [1, 2]}'}


async def test_typed_receive_of_another_kind_is_a_type_error() -> None:
    async with client_for(Router().websocket("/ws", echo)) as client, client.websocket("/ws") as ws:
        with pytest.raises(TypeError, match="expected a binary message, got Text"):
            await ws.receive_bytes()
        await ws.send_bytes(b"raw")
        with pytest.raises(TypeError, match="expected a text message, got Binary"):
            await ws.receive_text()
        await ws.send_bytes(b"{}")
        with pytest.raises(TypeError, match="expected a JSON text message"):
            await ws.receive_json()


async def test_subprotocol_is_the_routes_first_choice() -> None:
    router = Router().websocket("/ws", who, subprotocols=["b", "a"])
    async with (
        client_for(router) as client,
        client.websocket("/ws", subprotocols=["a", "b"]) as ws,
    ):
        assert ws.subprotocol == "b"
        assert ws.response_headers["sec-websocket-protocol"] == "b"
        assert await ws.receive_json() == {"subprotocol": "b"}


async def test_middleware_rejection_is_websocket_rejected() -> None:
    router = Router().middleware(deny).websocket("/ws", echo)
    async with client_for(router) as client:
        with pytest.raises(WebSocketRejected) as caught:
            async with client.websocket("/ws"):
                pytest.fail("the upgrade was accepted")
        response = caught.value.response
        assert response.status_code == 401
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {
            "status": 401,
            "error": "Unauthorized",
            "message": "missing or bad token",
        }
        async with client.websocket("/ws", headers={"authorization": "Bearer good"}) as ws:
            assert await ws.receive_text() == "Welcome!"


async def test_unknown_path_is_rejected_with_404() -> None:
    async with client_for(Router().websocket("/ws", echo)) as client:
        with pytest.raises(WebSocketRejected, match="status 404") as caught:
            async with client.websocket("/nowhere"):
                pass
        assert caught.value.response.json()["error"] == "Not Found"
        assert caught.value.response.request.url.path == "/nowhere"


async def test_origin_and_version_rejections() -> None:
    config = ServerConfig(websocket_allowed_origins=["http://good"])
    async with client_for(Router().websocket("/ws", echo), config) as client:
        with pytest.raises(WebSocketRejected) as caught:
            async with client.websocket("/ws", headers={"origin": "http://evil"}):
                pass
        assert caught.value.response.status_code == 403
        # Sec-WebSocket-* headers a test gives are sent beside the client's own.
        bad_version = {"origin": "http://good", "sec-websocket-version": "8"}
        with pytest.raises(WebSocketRejected) as caught:
            async with client.websocket("/ws", headers=bad_version):
                pass
        assert caught.value.response.status_code == 426
        async with client.websocket("/ws", headers={"origin": "http://good"}) as ws:
            assert await ws.receive_text() == "Welcome!"


async def test_handler_close_code_reaches_the_client() -> None:
    async with client_for(Router().websocket("/ws", close_with_4000)) as client:
        async with client.websocket("/ws") as ws:
            assert await ws.receive_text() == "bye soon"
            assert await ws.receive() == Message.Close(4000, "done")
            assert (ws.close_code, ws.close_reason) == (4000, "done")
            with pytest.raises(WebSocketDisconnected) as caught:
                await ws.receive()
            assert (caught.value.code, caught.value.reason) == (4000, "done")
            with pytest.raises(WebSocketDisconnected):
                await ws.send_text("too late")
        assert ws.close_code == 4000


async def test_typed_receive_of_the_close_raises_disconnected() -> None:
    async with (
        client_for(Router().websocket("/ws", close_with_4000)) as client,
        client.websocket("/ws") as ws,
    ):
        await ws.receive_text()
        with pytest.raises(WebSocketDisconnected) as caught:
            await ws.receive_text()
        assert caught.value.code == 4000
        assert str(caught.value) == "WebSocket closed with code 4000: done"


async def test_handler_exception_closes_with_1011(caplog: pytest.LogCaptureFixture) -> None:
    async with client_for(Router().websocket("/ws", failing)) as client:
        async with client.websocket("/ws") as ws:
            assert await ws.receive_text() == "about to fail"
            message = await ws.receive()
            assert isinstance(message, Message.Close)
            assert message.code == 1011
        assert ws.close_code == 1011
        assert "handler bug" not in (ws.close_reason or "")  # details go to the log only
        assert "handler bug" in caplog.text


async def test_client_close_reaches_the_handler() -> None:
    seen: list[Message | None] = []
    done = trio.Event()

    async def recorder(ws: WebSocketConnection) -> None:
        try:
            while True:
                message = await ws.recv()
                seen.append(message)
                if message is None:
                    return
        finally:
            done.set()

    async with client_for(Router().websocket("/ws", recorder)) as client:
        async with client.websocket("/ws") as ws:
            await ws.ping(b"p")
            await ws.send_text("one")
            await ws.close(1000, "bye")
            assert ws.close_code == 1000
            await ws.close()  # closing twice is harmless
            assert await ws.receive() == Message.Pong(b"p")  # still readable after close()
            assert await ws.receive() == Message.Close(1000, "bye")
        await done.wait()
        assert seen == [Message.Ping(b"p"), Message.Text("one"), Message.Close(1000, "bye"), None]


async def test_leaving_the_block_closes_with_1000() -> None:
    seen: list[Message | None] = []
    done = trio.Event()

    async def recorder(ws: WebSocketConnection) -> None:
        seen.extend([await ws.recv(), await ws.recv()])
        done.set()

    async with client_for(Router().websocket("/ws", recorder)) as client:
        async with client.websocket("/ws"):
            pass
        await done.wait()
        assert seen == [Message.Close(1000, ""), None]


async def test_path_params_and_query_on_a_websocket_route() -> None:
    router = Router().websocket("/rooms/{name}", room)
    async with (
        client_for(router) as client,
        client.websocket("/rooms/lobby?topic=news&page=2") as ws,
    ):
        assert await ws.receive_json() == {
            "room": "lobby",
            "query": {"topic": "news", "page": "2"},
        }


async def test_cookies_from_the_jar_reach_the_cookies_extractor() -> None:
    router = Router().get("/login", login).websocket("/ws", cookies)
    async with client_for(router) as client:
        assert (await client.get("/login")).status_code == 200  # Set-Cookie into the jar
        client.cookies.set("theme", "dark")
        async with client.websocket("/ws") as ws:
            assert await ws.receive_json() == {"sid": "from-login", "theme": "dark"}


async def test_client_and_call_headers_are_sent() -> None:
    async with client_for(Router().websocket("/ws", headers)) as client:
        client.headers["x-token"] = "t1"
        async with client.websocket("/ws", headers={"origin": "http://x"}) as ws:
            assert await ws.receive_json() == {"origin": "http://x", "x-token": "t1"}


async def upgrade_request(ws: WebSocketConnection, request: Request) -> None:
    """What a handler porting from Starlette reads off the upgrade request."""
    await ws.send_json(
        {
            "x-token": request.header("x-token"),
            "sid": request.cookie("sid"),
            "client": list(request.client) if request.client else None,
            "body": request.body.decode(),
            "read": (await request.read_body()).decode(),
        }
    )
    async for message in ws:  # the connection goes on as usual
        if isinstance(message, Message.Text):
            await ws.send_text(f"echo: {message.text}")


async def test_a_websocket_handler_may_take_the_upgrade_request() -> None:
    """Its headers, cookies and client address as sent; its body empty, read or not."""
    router = Router().websocket("/ws", upgrade_request)
    async with TestClient(router, client=("203.0.113.7", 4711)) as client:
        client.cookies.set("sid", "abc")
        async with client.websocket("/ws", headers={"x-token": "t1"}) as ws:
            with trio.fail_after(30):
                assert await ws.receive_json() == {
                    "x-token": "t1",
                    "sid": "abc",
                    "client": ["203.0.113.7", 4711],
                    "body": "",
                    "read": "",
                }
                await ws.send_text("hi")
                assert await ws.receive_text() == "echo: hi"


async def test_ping_brings_a_pong() -> None:
    async with client_for(Router().websocket("/ws", echo)) as client, client.websocket("/ws") as ws:
        assert await ws.receive_text() == "Welcome!"
        await ws.ping(b"data")
        assert await ws.receive() == Message.Pong(b"data")


async def test_one_task_receives_while_another_sends() -> None:
    received: list[str] = []

    async def receiver(ws: WebSocketTestSession) -> None:
        for _ in range(51):
            received.append(await ws.receive_text())

    async with client_for(Router().websocket("/ws", echo)) as client:
        async with client.websocket("/ws") as ws, trio.open_nursery() as nursery:
            nursery.start_soon(receiver, ws)
            for n in range(50):
                nursery.start_soon(ws.send_text, str(n))
        assert received[0] == "Welcome!"
        assert sorted(received[1:]) == sorted(f"Echo: {n}" for n in range(50))


async def test_receive_waits_on_the_mock_clock(autojump_clock: trio.testing.MockClock) -> None:
    async def slow(ws: WebSocketConnection) -> None:
        await trio.sleep(10)
        await ws.send_text("late")
        await ws.recv()

    async with client_for(Router().websocket("/ws", slow)) as client:
        start = trio.current_time()
        async with client.websocket("/ws") as ws:
            assert await ws.receive_text() == "late"
            assert trio.current_time() - start == pytest.approx(10)
            await ws.close(1001, "going")
        assert (ws.close_code, ws.close_reason) == (1001, "going")


# -- a scripted peer -------------------------------------------------------------------------

Script = Callable[["Peer"], Awaitable[None]]


class Peer:
    """The server end of an in-memory connection, driven by a test's script with wsproto."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.ws = WSConnection(ConnectionType.SERVER)
        self.request: ev.Request | None = None

    async def send(self, event: ev.Event) -> None:
        await self.stream.send_all(self.ws.send(event))

    async def next_event(self) -> ev.Event:
        while True:
            for event in self.ws.events():
                return event
            data = await self.stream.receive_some()
            self.ws.receive_data(bytes(data) or None)

    async def accept(self, subprotocol: str | None = None) -> None:
        request = await self.next_event()
        assert isinstance(request, ev.Request)
        self.request = request
        await self.send(ev.AcceptConnection(subprotocol=subprotocol))


@asynccontextmanager
async def scripted(script: Script) -> AsyncIterator[Any]:
    """A ``TestClient`` whose connections are served by ``script`` instead of the app."""

    async def serve(stream: trio.abc.Stream, client: tuple[str, int] | None) -> None:
        async with stream:
            await script(Peer(stream))

    test_client = TestClient(Router())
    test_client.server.handle_stream = serve  # type: ignore[method-assign]
    async with test_client as client:
        with trio.fail_after(30):
            yield client


async def test_fragmented_messages_are_assembled() -> None:
    async def script(peer: Peer) -> None:
        await peer.accept()
        await peer.send(ev.TextMessage(data="hel", message_finished=False))
        await peer.send(ev.TextMessage(data="lo", message_finished=True))
        await peer.send(ev.BytesMessage(data=b"\x01", message_finished=False))
        await peer.send(ev.BytesMessage(data=b"\x02", message_finished=True))
        await peer.next_event()

    async with scripted(script) as client, client.websocket("/ws") as ws:
        assert await ws.receive_text() == "hello"
        assert await ws.receive_bytes() == b"\x01\x02"


async def test_server_ping_is_answered_and_delivered() -> None:
    pongs: list[bytes] = []

    async def script(peer: Peer) -> None:
        await peer.accept()
        await peer.send(ev.Ping(payload=b"are you there"))
        pong = await peer.next_event()
        assert isinstance(pong, ev.Pong)
        pongs.append(bytes(pong.payload))
        await peer.send(ev.TextMessage(data="after"))
        await peer.next_event()

    async with scripted(script) as client, client.websocket("/ws") as ws:
        assert await ws.receive() == Message.Ping(b"are you there")
        assert await ws.receive_text() == "after"
        assert pongs == [b"are you there"]


async def test_handshake_details_reach_the_server() -> None:
    requests: list[ev.Request] = []

    async def script(peer: Peer) -> None:
        await peer.accept(subprotocol="chat")
        assert peer.request is not None
        requests.append(peer.request)
        await peer.next_event()

    async with (
        scripted(script) as client,
        client.websocket("/ws?x=1", subprotocols=["chat", "v2"]) as ws,
    ):
        assert ws.subprotocol == "chat"
    [request] = requests
    assert (request.host, request.target) == ("testserver", "/ws?x=1")
    assert request.subprotocols == ["chat", "v2"]


async def test_a_silent_peer_bounds_the_close(autojump_clock: trio.testing.MockClock) -> None:
    async def script(peer: Peer) -> None:
        await peer.accept()
        await trio.sleep_forever()  # never answers the Close

    async with scripted(script) as client:
        start = trio.current_time()
        async with client.websocket("/ws") as ws:
            pass
        assert trio.current_time() - start == pytest.approx(WebSocketTestSession.CLOSE_TIMEOUT)
        assert ws.close_code is None


async def test_a_dropped_connection_is_1006() -> None:
    async def script(peer: Peer) -> None:
        await peer.accept()
        await peer.send(ev.TextMessage(data="last words"))

    async with scripted(script) as client, client.websocket("/ws") as ws:
        assert await ws.receive_text() == "last words"
        assert await ws.receive() == Message.Close(1006, "")
        with pytest.raises(WebSocketDisconnected) as caught:
            await ws.receive_text()
        assert caught.value.code == 1006
        with pytest.raises(WebSocketDisconnected):
            await ws.send_text("anyone?")


async def test_server_close_during_the_handshake_read_is_delivered() -> None:
    async def script(peer: Peer) -> None:
        await peer.accept()
        await peer.send(ev.CloseConnection(code=1008, reason="policy"))
        closing = await peer.next_event()
        assert isinstance(closing, ev.CloseConnection)
        assert peer.ws.state is ConnectionState.CLOSED

    async with scripted(script) as client, client.websocket("/ws") as ws:
        assert await ws.receive() == Message.Close(1008, "policy")
    assert (ws.close_code, ws.close_reason) == (1008, "policy")


async def test_no_answer_at_all_is_a_protocol_error() -> None:
    async def script(peer: Peer) -> None:
        await peer.next_event()  # the upgrade request, then hang up

    async with scripted(script) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.websocket("/ws"):
                pass


async def test_rejection_without_a_body() -> None:
    async def script(peer: Peer) -> None:
        await peer.next_event()
        await peer.send(ev.RejectConnection(status_code=503, headers=[(b"retry-after", b"1")]))

    async with scripted(script) as client:
        with pytest.raises(WebSocketRejected) as caught:
            async with client.websocket("/ws"):
                pass
        assert caught.value.response.status_code == 503
        assert caught.value.response.headers["retry-after"] == "1"
        assert caught.value.response.content == b""


@pytest.mark.parametrize(
    ("frame", "code"),
    [(b"\x8f\x00", 1002), (b"\x81\x02\xc3\x28", 1007)],  # a reserved opcode; bad UTF-8
)
async def test_a_broken_frame_fails_the_connection(frame: bytes, code: int) -> None:
    closes: list[ev.Event] = []

    async def script(peer: Peer) -> None:
        await peer.accept()
        await peer.stream.send_all(frame)
        closes.append(await peer.next_event())

    async with scripted(script) as client, client.websocket("/ws") as ws:
        message = await ws.receive()
        assert isinstance(message, Message.Close)
        assert message.code == code
    [close] = closes
    assert isinstance(close, ev.CloseConnection)
    assert close.code == code
