"""Messages that arrive together with the peer's Close are all answered before the server's
Close reply (RFC 6455 section 5.5.1: after receiving a Close, an endpoint may still send data
until it sends its own Close).

The handler is the echo pattern of the original interface; the client sends its messages and
its Close in ONE write, so that the server reads them together. Clients: the hand-written one
(in memory through the test client's server, and over loopback, compressed or not), the
``websockets`` library's sans-I/O client and trio-websocket over loopback. On the mock clock,
the bound on the wait for the handler is checked to a tenth of a second either side.
HTTP/2 (RFC 8441) runs the same session over a stream: see ``test_over_http2.py``."""

from __future__ import annotations

import zlib
from contextlib import suppress

import attrs
import pytest
import trio
import trio.testing
import trio_websocket
import websockets.client
import websockets.frames
import websockets.uri
from wsproto.connection import Connection, ConnectionType
from wsproto.events import CloseConnection, TextMessage

from trioframe import Message, Router, ServerConfig, WebSocketClosed, WebSocketConnection
from trioframe._server.websocket import RECEIVE_QUEUE

from ..loopback._support import serving
from ._raw_client import CLOSE, TEXT, Frame, WsClient, frame, in_memory

#: Every test finishes well within this, and the close timeout is far past it: a Close reply
#: seen in time was sent because the handler caught up, not because time ran out.
DEADLINE = 5.0
CONFIG = ServerConfig(websocket_ping_interval=600.0, websocket_close_timeout=60.0)
TEXTS = ["a", "b", "c"]


async def echo(ws: WebSocketConnection) -> None:
    await ws.send_text("Welcome!")
    while (msg := await ws.recv()) is not None:
        match msg:
            case Message.Text(text):
                await ws.send_text(f"Echo: {text}")
            case Message.Close():
                break


def close_frame(code: int = 1000, reason: bytes = b"") -> bytes:
    return frame(CLOSE, code.to_bytes(2, "big") + reason)


def echoes(texts: list[str]) -> list[Frame]:
    return [Frame(True, False, TEXT, f"Echo: {text}".encode()) for text in texts]


def texts_of(count: int) -> list[str]:
    return TEXTS if count == len(TEXTS) else [f"message {index}" for index in range(count)]


async def expect_close_reply(client: WsClient, code: int, reason: bytes = b"") -> None:
    """The next frame is the server's Close, echoing ``code`` and ``reason``."""
    close = await client.read_frame()
    assert close.opcode == CLOSE, close
    assert close.payload == code.to_bytes(2, "big") + reason


async def expect_last_close_reply(client: WsClient, code: int, reason: bytes = b"") -> None:
    """The server's Close reply, then the end of the connection (the handler returned)."""
    await expect_close_reply(client, code, reason)
    assert await client.read_frame_or_eof() is None


# -- the hand-written client ----------------------------------------------------------------
@pytest.mark.parametrize("count", [1, 3, RECEIVE_QUEUE + 4])
async def test_in_memory_every_message_before_the_close_is_answered(count: int) -> None:
    """``RECEIVE_QUEUE + 4`` messages overflow the queue: the reader waits for room, then
    for the handler, and still answers the Close last."""
    texts = texts_of(count)
    with trio.fail_after(DEADLINE):
        async with in_memory(echo, CONFIG) as client:
            assert await client.read_frame() == Frame(True, False, TEXT, b"Welcome!")
            await client.send(
                b"".join(frame(TEXT, t.encode()) for t in texts) + close_frame(4000, b"done")
            )
            assert [await client.read_frame() for _ in texts] == echoes(texts)
            await expect_last_close_reply(client, 4000, b"done")


@pytest.mark.loopback
@pytest.mark.parametrize("compression", [False, True])
@pytest.mark.parametrize("count", [1, 3, RECEIVE_QUEUE + 4])
async def test_over_loopback_every_message_before_the_close_is_answered(
    count: int, compression: bool
) -> None:
    """Compressed, the answers are deflated by the same frame layer after the peer's Close
    as before it (the compression context carries on)."""
    texts = texts_of(count)
    config = attrs.evolve(CONFIG, websocket_compression=compression)
    offer = "permessage-deflate" if compression else None
    inflater = zlib.decompressobj(wbits=-15)
    with trio.fail_after(DEADLINE):
        async with (
            serving(Router().websocket("/ws", echo), config) as served,
            WsClient.connect(served, "/ws", extensions=offer) as client,
        ):
            assert ("sec-websocket-extensions" in client.headers) is compression
            welcome = await client.read_message(inflater)
            assert welcome.payload == b"Welcome!"
            await client.send(b"".join(frame(TEXT, t.encode()) for t in texts) + close_frame())
            answers = [(await client.read_message(inflater)).payload for _ in texts]
            assert answers == [f"Echo: {text}".encode() for text in texts]
            await expect_last_close_reply(client, 1000)


# -- the websockets library (sans-I/O) and trio-websocket --------------------------------------
@pytest.mark.loopback
async def test_websockets_client_gets_every_answer_then_the_close() -> None:
    """The ``websockets`` library's protocol writes the messages and the Close; one write."""
    with trio.fail_after(DEADLINE):
        async with serving(Router().websocket("/ws", echo), CONFIG) as served:
            uri = websockets.uri.parse_uri(f"ws://{served.host}:{served.port}/ws")
            protocol = websockets.client.ClientProtocol(uri)
            async with await trio.open_tcp_stream(served.host, served.port) as stream:
                protocol.send_request(protocol.connect())
                await stream.send_all(b"".join(protocol.data_to_send()))
                received = await _websockets_frames(stream, protocol, until_texts=1)
                assert protocol.handshake_exc is None
                assert received == ["Welcome!"]
                for text in TEXTS:
                    protocol.send_text(text.encode())
                protocol.send_close(1000)
                await stream.send_all(b"".join(protocol.data_to_send()))
                received = await _websockets_frames(stream, protocol)
    assert received == [f"Echo: {text}" for text in TEXTS]
    assert protocol.close_rcvd is not None and protocol.close_rcvd.code == 1000
    assert protocol.close_rcvd_then_sent is False  # the server answered our Close


async def _websockets_frames(
    stream: trio.SocketStream,
    protocol: websockets.client.ClientProtocol,
    until_texts: int | None = None,
) -> list[str]:
    """The text messages ``protocol`` reads: ``until_texts`` of them, or all of them up to
    the end of the connection."""
    texts: list[str] = []
    while until_texts is None or len(texts) < until_texts:
        data = await stream.receive_some()
        if data:
            protocol.receive_data(data)
        else:
            protocol.receive_eof()
        for event in protocol.events_received():
            text = websockets.frames.Opcode.TEXT
            if isinstance(event, websockets.frames.Frame) and event.opcode is text:
                texts.append(event.data.decode())
        if not data:
            return texts
    return texts


class CorkedStream(trio.abc.Stream):
    """A loopback stream whose writes can be held back, then sent in one write, and whose
    reads from then on are recorded (trio-websocket drops the messages that arrive after it
    has sent its Close; the recording shows what the server sent)."""

    def __init__(self, inner: trio.SocketStream) -> None:
        self.inner = inner
        self.held: list[bytes] | None = None
        self.received = bytearray()
        self._recording = False
        self._more_held = trio.Event()

    def cork(self) -> None:
        self.held = []

    async def wait_until_held(self, writes: int) -> None:
        while self.held is None or len(self.held) < writes:
            await self._more_held.wait()
            self._more_held = trio.Event()

    async def uncork(self) -> None:
        assert self.held is not None
        data, self.held = b"".join(self.held), None
        self._recording = True
        await self.inner.send_all(data)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.held is None:
            await self.inner.send_all(data)
            return
        self.held.append(bytes(data))
        self._more_held.set()
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.inner.receive_some(max_bytes)
        if self._recording:
            self.received += data
        return bytes(data)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.loopback
async def test_trio_websocket_client_gets_every_answer_then_the_close() -> None:
    """trio-websocket writes the messages and the Close (held back, then one write)."""
    with trio.fail_after(DEADLINE):
        async with (
            serving(Router().websocket("/ws", echo), CONFIG) as served,
            trio.open_nursery() as nursery,
        ):
            stream = CorkedStream(await trio.open_tcp_stream(served.host, served.port))
            ws = await trio_websocket.wrap_client_stream(
                nursery,
                stream,  # type: ignore[arg-type]  # any trio stream will do
                served.host,
                "/ws",
            )
            assert await ws.get_message() == "Welcome!"
            stream.cork()
            for text in TEXTS:
                await ws.send_message(text)
            nursery.start_soon(ws.aclose)  # its Close is held too; it waits for the reply
            await stream.wait_until_held(len(TEXTS) + 1)
            await stream.uncork()
    reader = Connection(ConnectionType.CLIENT)
    reader.receive_data(bytes(stream.received))
    assert list(reader.events()) == [
        *[TextMessage(data=f"Echo: {text}") for text in TEXTS],
        CloseConnection(code=1000, reason=""),
    ]


# -- after the Close, on the mock clock --------------------------------------------------------
CLOSE_TIMEOUT = 3.0


@pytest.mark.parametrize(("delay", "answered"), [(2.9, True), (3.1, False)])
async def test_the_handler_has_the_close_timeout_to_answer(
    autojump_clock: trio.testing.MockClock, delay: float, answered: bool
) -> None:
    """A handler that takes 2.9 s over the message before the Close still gets its answer
    out, and the Close reply follows at 2.9 s; at 3.1 s the reply went out at 3 s, and the
    late answer fails with ``WebSocketClosed`` carrying the peer's code."""
    outcome: list[object] = []
    finished = trio.Event()

    async def slow(ws: WebSocketConnection) -> None:
        assert await ws.recv() == Message.Text("hello")
        await trio.sleep(delay)
        try:
            await ws.send_text("hello back")
            outcome.append("sent")
        except WebSocketClosed as closed:
            outcome.append(closed.code)
        with suppress(WebSocketClosed):
            while await ws.recv() is not None:
                pass
        finished.set()

    config = attrs.evolve(CONFIG, websocket_close_timeout=CLOSE_TIMEOUT)
    async with in_memory(slow, config) as client:
        start = trio.current_time()
        await client.send(frame(TEXT, b"hello") + close_frame(4000))
        if answered:
            assert await client.read_frame() == Frame(True, False, TEXT, b"hello back")
        await expect_close_reply(client, 4000)
        assert trio.current_time() - start == pytest.approx(delay if answered else CLOSE_TIMEOUT)
        await finished.wait()
    assert outcome == ["sent" if answered else 4000]


async def test_a_handler_that_never_reads_does_not_delay_the_reply(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Nothing was queued before the Close: nothing to answer, the reply goes at once."""
    release = trio.Event()

    async def sender(ws: WebSocketConnection) -> None:
        await ws.send_text("hi")
        await release.wait()

    config = attrs.evolve(CONFIG, websocket_close_timeout=CLOSE_TIMEOUT)
    async with in_memory(sender, config) as client:
        assert await client.read_frame() == Frame(True, False, TEXT, b"hi")
        start = trio.current_time()
        await client.send(close_frame())
        await expect_close_reply(client, 1000)
        assert trio.current_time() == start
        release.set()


async def test_once_the_handler_has_the_close_its_sends_raise() -> None:
    """The answers to what came before the Close go out; a send after the handler took the
    Close raises ``WebSocketClosed`` (the peer's code) and nothing follows the reply."""
    outcome: list[object] = []
    finished = trio.Event()

    async def talkative(ws: WebSocketConnection) -> None:
        async for message in ws:
            match message:
                case Message.Text(text):
                    await ws.send_text(text.upper())
                case Message.Close():
                    try:
                        await ws.send_text("goodbye")
                    except WebSocketClosed as closed:
                        outcome.append((closed.code, closed.reason))
        finished.set()

    with trio.fail_after(DEADLINE):
        async with in_memory(talkative, CONFIG) as client:
            await client.send(frame(TEXT, b"x") + close_frame(4001, b"bye"))
            assert await client.read_frame() == Frame(True, False, TEXT, b"X")
            await expect_last_close_reply(client, 4001, b"bye")
            await finished.wait()
    assert outcome == [(4001, "bye")]
