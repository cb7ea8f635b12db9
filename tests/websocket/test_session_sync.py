"""``Inbox`` and ``SendLock``, what the tasks of one WebSocket session share: order, bounds,
closing, and what a cancelled waiter leaves behind."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trioframe._server.websocket_sync import Inbox, SendLock


async def test_the_inbox_is_a_bounded_fifo() -> None:
    inbox = Inbox[int](2)
    assert not inbox.ready()
    assert inbox.put_nowait(1) and inbox.put_nowait(2)
    assert not inbox.put_nowait(3)  # full: nothing queued
    assert inbox.ready()
    assert [await inbox.get(), await inbox.get()] == [1, 2]
    assert not inbox.ready()


async def test_a_waiting_get_is_woken_by_a_put() -> None:
    inbox = Inbox[str](1)
    got: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _get_into(inbox, got))
        await trio.testing.wait_all_tasks_blocked()
        assert inbox.put_nowait("a")
    assert got == ["a"]


async def test_a_put_waits_for_room() -> None:
    inbox = Inbox[int](1)
    inbox.put_nowait(1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(inbox.put, 2)
        await trio.testing.wait_all_tasks_blocked()
        assert await inbox.get() == 1  # makes room: the put goes on
    assert await inbox.get() == 2


async def test_closing_drains_then_ends() -> None:
    inbox = Inbox[int](4)
    inbox.put_nowait(1)
    inbox.close()
    assert inbox.ready()
    assert await inbox.get() == 1
    with pytest.raises(trio.EndOfChannel):
        await inbox.get()
    with pytest.raises(trio.ClosedResourceError):
        inbox.put_nowait(2)


async def test_closing_wakes_every_waiter() -> None:
    empty, full = Inbox[int](1), Inbox[int](1)
    full.put_nowait(0)
    outcomes: list[str] = []

    async def get() -> None:
        with pytest.raises(trio.EndOfChannel):
            await empty.get()
        outcomes.append("get ended")

    async def put() -> None:
        with pytest.raises(trio.ClosedResourceError):
            await full.put(1)
        outcomes.append("put refused")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(get)
        nursery.start_soon(put)
        await trio.testing.wait_all_tasks_blocked()
        empty.close()
        full.close()
    assert sorted(outcomes) == ["get ended", "put refused"]


async def test_a_cancelled_get_loses_nothing() -> None:
    inbox = Inbox[str](1)
    with trio.move_on_after(0.01) as scope:
        await inbox.get()
    assert scope.cancelled_caught
    assert inbox.put_nowait("kept")
    assert await inbox.get() == "kept"


async def _get_into(inbox: Inbox[str], got: list[str]) -> None:
    got.append(await inbox.get())


async def test_the_lock_is_handed_over_in_order() -> None:
    lock = SendLock()
    order: list[int] = []

    async def take(n: int) -> None:
        async with lock:
            order.append(n)
            await trio.lowlevel.checkpoint()

    await lock.acquire()
    async with trio.open_nursery() as nursery:
        for n in range(3):
            nursery.start_soon(take, n)
            await trio.testing.wait_all_tasks_blocked()
        lock.release()
    assert order == [0, 1, 2]
    assert not lock.held


async def test_a_cancelled_waiter_does_not_take_the_lock() -> None:
    lock = SendLock()
    await lock.acquire()
    with trio.move_on_after(0.01) as scope:
        await lock.acquire()
    assert scope.cancelled_caught
    lock.release()
    assert not lock.held  # nobody was waiting any more: free
    async with lock:
        assert lock.held
