"""Messages that arrive just before a frame that fails the connection (a protocol error or an
oversized message) are still answered: the server stops reading at the bad frame, lets the
handler take what came before it and ask for the next message, and only then sends its Close.
The handler gets ``websocket_close_timeout`` for that; a handler that does not ask again in
time finds the connection closed.

Over loopback the messages and the bad frame go out in one write, so that the server reads
them together (the case Autobahn grades "non-strict" when the replies are lost); on the mock
clock, in memory, the bound is checked to a tenth of a second either side."""

from __future__ import annotations

from contextlib import suppress

import attrs
import pytest
import trio
import trio.testing

from trioframe import Message, Router, ServerConfig, WebSocketClosed, WebSocketConnection
from trioframe._server.websocket import RECEIVE_QUEUE

from ..loopback._support import serving
from ._raw_client import BINARY, CLOSE, PING, TEXT, Frame, WsClient, echo, frame, in_memory

#: Every loopback test finishes well within this, and the close timeout is far past it: a
#: Close seen in time was sent because the handler caught up, not because time ran out.
DEADLINE = 5.0
LIMIT = 1000
CONFIG = ServerConfig(
    websocket_ping_interval=600.0,
    websocket_close_timeout=60.0,
    websocket_max_message_size=LIMIT,
)


BAD_FRAMES = [
    pytest.param(frame(TEXT, b"x", masked=False), 1002, id="unmasked"),
    pytest.param(frame(0x3, b"x"), 1002, id="reserved-opcode"),
    pytest.param(frame(TEXT, b"\xff"), 1007, id="invalid-utf8"),
    pytest.param(frame(BINARY, b"x" * (LIMIT + 1)), 1009, id="over-the-size-limit"),
]


@pytest.mark.loopback
@pytest.mark.parametrize(("bad", "code"), BAD_FRAMES)
@pytest.mark.parametrize("count", [1, 3, RECEIVE_QUEUE + 4])
async def test_messages_before_a_bad_frame_are_echoed_before_the_close(
    bad: bytes, code: int, count: int
) -> None:
    """``RECEIVE_QUEUE + 4`` messages overflow the queue: the reader waits for room, then
    for the handler, and still sends the Close last."""
    texts = [f"message {index}" for index in range(count)]
    with trio.fail_after(DEADLINE):
        async with serving(Router().websocket("/echo", echo), CONFIG) as served:
            async with WsClient.connect(served) as client:
                await client.send(b"".join(frame(TEXT, text.encode()) for text in texts) + bad)
                echoes = [await client.read_frame() for _ in texts]
                assert echoes == [Frame(True, False, TEXT, text.encode()) for text in texts]
                await client.expect_failure(code)
            async with WsClient.connect(served) as client:  # the server keeps serving
                await client.assert_echoes()


@pytest.mark.loopback
async def test_a_ping_before_a_bad_frame_is_delivered_but_not_answered() -> None:
    """The handler sees the ping (``Message.Ping``); the pong the reader would have sent at
    the end of the read is not, since the connection failed first."""
    seen: list[Message | None] = []

    async def recorder(ws: WebSocketConnection) -> None:
        while (message := await ws.recv()) is not None:
            seen.append(message)

    with trio.fail_after(DEADLINE):
        async with (
            serving(Router().websocket("/ws", recorder), CONFIG) as served,
            WsClient.connect(served, "/ws") as client,
        ):
            await client.send(frame(PING, b"p") + frame(TEXT, b"x", masked=False))
            await client.expect_failure(1002)
    match seen:
        case [Message.Ping(b"p"), Message.Close(1002, _)]:
            pass
        case _:
            pytest.fail(f"unexpected messages: {seen}")


# -- the bound, on the mock clock -------------------------------------------------------------
CLOSE_TIMEOUT = 3.0


@pytest.mark.parametrize(("delay", "answered"), [(2.9, True), (3.1, False)])
async def test_the_handler_has_the_close_timeout_to_catch_up(
    autojump_clock: trio.testing.MockClock, delay: float, answered: bool
) -> None:
    """A handler that takes 2.9 s over the message before the bad frame still gets its reply
    out, and the Close follows it at 2.9 s; at 3.1 s the Close went out at 3 s, and the late
    reply fails with ``WebSocketClosed``."""
    outcome: list[str] = []
    finished = trio.Event()

    async def slow(ws: WebSocketConnection) -> None:
        message = await ws.recv()
        assert message == Message.Text("hello")
        await trio.sleep(delay)
        try:
            await ws.send_text("hello back")
            outcome.append("sent")
        except WebSocketClosed:
            outcome.append("closed")
        with suppress(WebSocketClosed):
            while await ws.recv() is not None:
                pass
        finished.set()

    config = attrs.evolve(CONFIG, websocket_close_timeout=CLOSE_TIMEOUT)
    async with in_memory(slow, config) as client:
        start = trio.current_time()
        await client.send(frame(TEXT, b"hello") + frame(TEXT, b"x", masked=False))
        first = await client.read_frame()
        if answered:
            assert first == Frame(True, False, TEXT, b"hello back")
            first = await client.read_frame()
        assert first.opcode == CLOSE
        assert first.close_code == 1002
        assert trio.current_time() - start == pytest.approx(delay if answered else CLOSE_TIMEOUT)
        await finished.wait()
    assert outcome == ["sent" if answered else "closed"]


async def test_a_handler_that_never_reads_does_not_delay_the_close(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Nothing was queued before the bad frame: no reply to wait for, the Close goes at once."""
    release = trio.Event()

    async def sender(ws: WebSocketConnection) -> None:
        await ws.send_text("hi")
        await release.wait()

    config = attrs.evolve(CONFIG, websocket_close_timeout=CLOSE_TIMEOUT)
    async with in_memory(sender, config) as client:
        assert await client.read_frame() == Frame(True, False, TEXT, b"hi")
        start = trio.current_time()
        await client.send(frame(TEXT, b"x", masked=False))
        await client.expect_failure(1002)
        assert trio.current_time() == start
        release.set()


async def test_a_handler_that_returns_instead_of_asking_again_ends_the_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The handler takes the message and returns: its Close (1000) goes out, and the server
    drops the connection then, not ``CLOSE_TIMEOUT`` later."""

    async def once(ws: WebSocketConnection) -> None:
        assert await ws.recv() == Message.Text("hello")

    config = attrs.evolve(CONFIG, websocket_close_timeout=CLOSE_TIMEOUT)
    async with in_memory(once, config) as client:
        start = trio.current_time()
        await client.send(frame(TEXT, b"hello") + frame(TEXT, b"x", masked=False))
        await client.expect_failure(1000)
        assert trio.current_time() == start
