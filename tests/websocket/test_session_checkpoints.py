"""The checkpoints of a handler's calls, on a real socket (where a write the socket takes
whole does not wait): every call is a cancel point, and a schedule point unless the call
before it waited: a handler that only sends, or only reads queued messages, lets the other
tasks run at every call, and the send that answers a message it waited for passes none (an
echo yields once per message, not twice)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import trio
import trio.testing

from trioframe import Router, ServerConfig, WebSocketConnection

from ..loopback._support import serving
from ._raw_client import CLOSE, TEXT, Frame, WsClient, frame


class Steps(trio.abc.Instrument):
    """Counts the steps the current task is given by the scheduler: a call that passes a
    schedule point ends one step and the task goes on in a new one."""

    def __init__(self) -> None:
        self.task = trio.lowlevel.current_task()
        self.count = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.count += 1


@asynccontextmanager
async def counting_steps() -> AsyncIterator[Steps]:
    steps = Steps()
    trio.lowlevel.add_instrument(steps)
    try:
        yield steps
    finally:
        trio.lowlevel.remove_instrument(steps)


async def until_queued(ws: WebSocketConnection, count: int) -> None:
    """Wait until the session's reader has queued ``count`` messages for the handler: until
    every other task is blocked (the reader then waits for more bytes), checked on the
    session's own queue (no public call tells how much it holds)."""
    await trio.testing.wait_all_tasks_blocked()
    assert len(ws._session._inbox._items) == count  # type: ignore[attr-defined]


async def talk(
    handler: Callable[[WebSocketConnection], Awaitable[None]], client_sends: bytes
) -> list[Frame]:
    """Serve ``handler`` on a loopback socket, send ``client_sends``, read until Close."""
    router = Router().websocket("/echo", handler)
    async with serving(router, ServerConfig()) as served, WsClient.connect(served) as client:
        await client.send(client_sends)
        frames = []
        while (received := await client.read_frame()).opcode != CLOSE:
            frames.append(received)
        return frames


async def test_a_handler_that_only_sends_lets_other_tasks_run() -> None:
    steps: list[int] = []

    async def sender(ws: WebSocketConnection) -> None:
        await ws.recv()
        async with counting_steps() as counted:
            for _ in range(20):
                before = counted.count
                await ws.send_text("x")
                steps.append(counted.count - before)

    frames = await talk(sender, frame(TEXT, b"go"))
    assert len(frames) == 20
    assert steps == [0] + [1] * 19  # the first follows a receive that waited


async def test_a_handler_reading_queued_messages_lets_other_tasks_run() -> None:
    steps: list[int] = []

    async def reader(ws: WebSocketConnection) -> None:
        await ws.recv()
        await until_queued(ws, 10)
        async with counting_steps() as counted:
            for _ in range(10):
                before = counted.count
                assert await ws.recv() is not None
                steps.append(counted.count - before)

    await talk(reader, frame(TEXT, b"first") + frame(TEXT, b"queued") * 10)
    assert steps == [0] + [1] * 9  # the first follows a receive that waited (then the wait)


async def test_an_echo_yields_once_per_message() -> None:
    """The send that answers a message the handler waited for passes no schedule point."""
    steps: list[int] = []

    async def echo(ws: WebSocketConnection) -> None:
        async with counting_steps() as counted:
            while (message := await ws.recv()) is not None:
                before = counted.count
                await ws.send_text(getattr(message, "text", ""))
                steps.append(counted.count - before)

    router = Router().websocket("/echo", echo)
    async with serving(router, ServerConfig()) as served, WsClient.connect(served) as client:
        for text in ("one", "two", "three"):
            await client.assert_echoes(text)
    assert steps[1:] == [0, 0]  # (the first message may have been queued before it was asked)


async def test_every_call_is_a_cancel_point() -> None:
    outcomes: list[str] = []

    async def handler(ws: WebSocketConnection) -> None:
        await ws.recv()  # waited: the next call needs no schedule point, still a cancel point
        calls = (ws.send_text("no"), ws.send_text("no"), ws.recv(), ws.ping(b"no"), ws.close())
        for call in calls:
            with trio.CancelScope() as scope:
                scope.cancel()
                await call
            outcomes.append("cancelled" if scope.cancelled_caught else "ran")
        await ws.send_text("after")

    frames = await talk(handler, frame(TEXT, b"go") + frame(TEXT, b"queued"))
    assert outcomes == ["cancelled"] * 5
    assert frames == [Frame(True, False, TEXT, b"after")]
