"""The server session's timeouts and flow control, in memory on trio's mock clock: keep-alive
pings and dead peers, the close timeout, send backpressure and the send timeout, the bounded
receive queue, and cancelling a handler whose peer is gone.

The peer is a wsproto client driven by the test, over a stream pair whose server end is
handed to the real ``Server.handle_stream``. ``lockstep_stream_pair`` gives the backpressure
a socket gives: a write waits until the other side reads it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress

import pytest
import trio
import trio.testing
from wsproto import WSConnection
from wsproto import events as ev
from wsproto.connection import ConnectionType

from trioframe import Message, Router, ServerConfig, WebSocketClosed, WebSocketConnection
from trioframe._server.websocket import RECEIVE_QUEUE
from trioframe.testing import TestClient

Handler = Callable[[WebSocketConnection], Awaitable[None]]


class Client:
    """A WebSocket client the test drives by hand (it answers nothing on its own)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.eof = False

    async def send(self, event: ev.Event) -> None:
        await self.stream.send_all(self.ws.send(event))

    async def next_event(self) -> ev.Event | None:
        """The next event, or ``None`` once the server has closed the TCP connection."""
        while True:
            for event in self.ws.events():
                return event
            if self.eof:
                return None
            try:
                data = await self.stream.receive_some()
            except trio.BrokenResourceError:
                data = b""
            if not data:  # not handed to wsproto, which would report it as a Close (1006)
                self.eof = True
                return None
            self.ws.receive_data(bytes(data))

    async def open(self, path: str = "/ws") -> None:
        await self.send(ev.Request(host="testserver", target=path))
        accepted = await self.next_event()
        assert isinstance(accepted, ev.AcceptConnection), accepted


@asynccontextmanager
async def connected(
    handler: Handler,
    config: ServerConfig | None = None,
    *,
    lockstep: bool = False,
) -> AsyncIterator[Client]:
    """``handler`` on ``/ws`` behind a real server, and an open client connection to it."""
    test_client = TestClient(Router().websocket("/ws", handler), config)
    pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
    async with test_client, trio.open_nursery() as nursery:
        client_end, server_end = pair()
        nursery.start_soon(test_client.server.handle_stream, server_end, ("127.0.0.1", 9))
        client = Client(client_end)
        await client.open()
        yield client
        nursery.cancel_scope.cancel()


async def drain(client: Client) -> list[ev.Event]:
    """Every event until the server drops the connection."""
    events: list[ev.Event] = []
    while (event := await client.next_event()) is not None:
        events.append(event)
    return events


# -- keep-alive ------------------------------------------------------------------------------
async def test_a_peer_that_never_answers_pings_is_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[Message | None] = []
    done = trio.Event()

    async def listener(ws: WebSocketConnection) -> None:
        while (message := await ws.recv()) is not None:
            seen.append(message)
        seen.append(None)
        done.set()

    config = ServerConfig().with_websocket_ping_interval(5).with_websocket_ping_timeout(2)
    async with connected(listener, config) as client:
        start = trio.current_time()
        events = await drain(client)
        assert trio.current_time() - start == pytest.approx(7)  # interval + timeout
        await done.wait()
    assert [type(event) for event in events] == [ev.Ping]
    assert seen == [Message.Close(1006, ""), None]


async def test_a_peer_that_answers_pings_stays(autojump_clock: trio.testing.MockClock) -> None:
    async def idle(ws: WebSocketConnection) -> None:
        async for _ in ws:  # pings are delivered too
            pass

    config = ServerConfig().with_websocket_ping_interval(5).with_websocket_ping_timeout(2)
    async with connected(idle, config) as client:
        pings = 0
        while trio.current_time() < 100:
            event = await client.next_event()
            assert isinstance(event, ev.Ping), event
            pings += 1
            await client.send(event.response())
        assert pings == 20  # one every 5 s, and the connection is still open
        await client.send(ev.CloseConnection(code=1000))
        assert isinstance(await client.next_event(), ev.CloseConnection)


@pytest.mark.parametrize(("delay", "kept"), [(1.9, True), (2.1, False)])
async def test_a_pong_counts_only_within_the_ping_timeout(
    autojump_clock: trio.testing.MockClock, delay: float, kept: bool
) -> None:
    """A pong 0.1 s inside the 2 s timeout keeps the peer; 0.1 s past it is too late."""

    async def idle(ws: WebSocketConnection) -> None:
        async for _ in ws:
            pass

    config = ServerConfig().with_websocket_ping_interval(5).with_websocket_ping_timeout(2)
    async with connected(idle, config) as client:
        ping = await client.next_event()
        assert isinstance(ping, ev.Ping)
        assert trio.current_time() == pytest.approx(5)
        await trio.sleep(delay)
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await client.send(ping.response())
        after = await client.next_event()
        if kept:  # the next keep-alive ping comes, on time
            assert isinstance(after, ev.Ping)
            assert trio.current_time() == pytest.approx(10)
        else:  # the connection was dropped at 5 + 2
            assert after is None


# -- closing ---------------------------------------------------------------------------------
async def test_a_peer_that_ignores_the_close_is_dropped_after_the_close_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def leaves(ws: WebSocketConnection) -> None:
        await ws.send_text("bye")

    config = ServerConfig().with_websocket_close_timeout(3)
    async with connected(leaves, config) as client:
        start = trio.current_time()
        events = await drain(client)
        assert trio.current_time() - start == pytest.approx(3)
    assert [type(event) for event in events] == [ev.TextMessage, ev.CloseConnection]


@pytest.mark.parametrize(("delay", "clean"), [(2.9, True), (3.1, False)])
async def test_a_close_reply_counts_only_within_the_close_timeout(
    autojump_clock: trio.testing.MockClock, delay: float, clean: bool
) -> None:
    """The server's Close answered 0.1 s inside the 3 s close timeout ends the connection
    then, cleanly; 0.1 s past it, the server has dropped the connection already at 3 s."""

    async def leaves(ws: WebSocketConnection) -> None:
        pass

    config = ServerConfig().with_websocket_close_timeout(3)
    dropped_after: list[float] = []
    async with connected(leaves, config) as client:
        close = await client.next_event()
        assert isinstance(close, ev.CloseConnection)
        start = trio.current_time()

        async def watch_for_eof() -> None:
            assert await client.next_event() is None
            dropped_after.append(trio.current_time() - start)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_for_eof)
            await trio.sleep(delay)
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await client.send(close.response())
    assert dropped_after == [pytest.approx(delay if clean else 3)]


@pytest.mark.parametrize("cancel", [True, False])
async def test_a_handler_that_ignores_a_dropped_peer(
    autojump_clock: trio.testing.MockClock, cancel: bool
) -> None:
    outcome: list[str] = []

    async def busy(ws: WebSocketConnection) -> None:
        try:
            await trio.sleep(60)  # not reading: it cannot see the peer go
            outcome.append(f"finished at {trio.current_time():.0f}")
        except trio.Cancelled:
            outcome.append(f"cancelled at {trio.current_time():.0f}")
            raise

    config = ServerConfig(cancel_on_disconnect=cancel).with_websocket_close_timeout(4)
    async with connected(busy, config) as client:
        await client.stream.aclose()  # the peer drops the TCP connection at t=0
        await trio.sleep(100)
    assert outcome == (["cancelled at 4"] if cancel else ["finished at 60"])


# -- sending ---------------------------------------------------------------------------------
async def test_send_waits_for_a_slow_reader(autojump_clock: trio.testing.MockClock) -> None:
    sent = trio.Event()

    async def talker(ws: WebSocketConnection) -> None:
        await ws.send_text("x" * 1000)
        sent.set()
        await ws.recv()

    async with connected(talker, lockstep=True) as client:
        await trio.sleep(30)  # the client reads nothing for 30 s
        assert not sent.is_set()
        event = await client.next_event()
        assert isinstance(event, ev.TextMessage)
        assert event.data == "x" * 1000
        await sent.wait()
        await client.send(ev.CloseConnection(code=1000))


async def test_a_peer_that_stops_reading_hits_the_send_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    failures: list[tuple[int, str, float]] = []

    async def flood(ws: WebSocketConnection) -> None:
        try:
            while True:
                await ws.send_bytes(b"\x00" * 1000)
        except WebSocketClosed as closed:
            failures.append((closed.code, closed.reason, trio.current_time()))

    config = ServerConfig().with_send_timeout(8)
    async with connected(flood, config, lockstep=True) as client:
        start = trio.current_time()
        await trio.sleep(20)  # not reading
        assert [(code, reason) for code, reason, _ in failures] == [(1006, "send timed out")]
        assert failures[0][2] - start == pytest.approx(8)
        with pytest.raises((trio.BrokenResourceError, trio.ClosedResourceError)):
            await client.send(ev.TextMessage(data="still there?"))


@pytest.mark.parametrize(("delay", "delivered"), [(7.9, True), (8.1, False)])
async def test_a_send_may_wait_up_to_the_send_timeout(
    autojump_clock: trio.testing.MockClock, delay: float, delivered: bool
) -> None:
    """A peer that starts reading 0.1 s inside the 8 s send timeout gets the message; 0.1 s
    past it, the send has failed and the connection is gone."""
    outcome: list[str] = []

    async def talker(ws: WebSocketConnection) -> None:
        try:
            await ws.send_text("x" * 1000)
            outcome.append("sent")
        except WebSocketClosed as closed:
            outcome.append(closed.reason)

    config = ServerConfig().with_send_timeout(8)
    async with connected(talker, config, lockstep=True) as client:
        await trio.sleep(delay)  # not reading
        events = await drain(client)
    kinds = [type(event) for event in events]
    if delivered:  # the message, then the Close of a handler that returned
        assert kinds == [ev.TextMessage, ev.CloseConnection]
        assert outcome == ["sent"]
    else:  # dropped without a Close (the frame was on its way: it may still arrive)
        assert ev.CloseConnection not in kinds
        assert outcome == ["send timed out"]


# -- receiving -------------------------------------------------------------------------------
async def test_the_receive_queue_is_bounded() -> None:
    reading = trio.Event()
    received: list[str] = []

    async def late_reader(ws: WebSocketConnection) -> None:
        await reading.wait()
        async for message in ws:
            if isinstance(message, Message.Text):
                received.append(message.text)
            if len(received) == 100:
                return

    async with connected(late_reader, lockstep=True) as client:
        sent = 0

        async def sender() -> None:
            nonlocal sent
            for n in range(100):
                await client.send(ev.TextMessage(data=str(n)))
                sent += 1

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            await trio.testing.wait_all_tasks_blocked()
            # the server holds RECEIVE_QUEUE messages plus the one its reader is delivering,
            # and then stops reading: the client's next write waits
            assert RECEIVE_QUEUE <= sent <= RECEIVE_QUEUE + 2
            reading.set()
        assert sent == 100
        assert received == [str(n) for n in range(100)]
        close = await client.next_event()
        assert isinstance(close, ev.CloseConnection)
        assert close.code == 1000


# -- how a handler ends ----------------------------------------------------------------------
@pytest.mark.parametrize("other_error", [False, True])
async def test_websocket_closed_from_a_handlers_nursery_ends_quietly(
    caplog: pytest.LogCaptureFixture, other_error: bool
) -> None:
    finished = trio.Event()

    async def fails() -> None:
        raise RuntimeError("a real bug")

    async def late_sender(ws: WebSocketConnection) -> None:
        try:
            async for _ in ws:
                pass
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ws.send_text, "too late")  # raises WebSocketClosed
                if other_error:
                    nursery.start_soon(fails)
        finally:
            finished.set()

    with caplog.at_level(logging.INFO, logger="trioframe"):
        async with connected(late_sender) as client:
            await client.send(ev.CloseConnection(code=1000))
            assert isinstance(await client.next_event(), ev.CloseConnection)
            await finished.wait()
            await trio.testing.wait_all_tasks_blocked()
    failures = [r for r in caplog.records if r.getMessage() == "WebSocket handler failed"]
    assert len(failures) == (1 if other_error else 0)
