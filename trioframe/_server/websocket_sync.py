"""What the tasks of one WebSocket connection share: ``Inbox``, the bounded queue from the
reader task to the handler, and ``SendLock``, the strict FIFO lock every write goes through.

Both are trio's memory channel and ``StrictFIFOLock`` cut to what a session needs, as they
sit on the path of every message: neither call is a checkpoint when it does not wait (the
session passes its own schedule point, ``ServerSession._pass_checkpoint``), and a task that
waits is parked with ``wait_task_rescheduled`` directly, with no parking lot between. Queues
and waiters are plain lists: they hold a few items at most, and an empty ``deque`` takes
760 bytes against a list's 56, on every idle connection.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import trio

__all__ = ["Inbox", "SendLock"]

T = TypeVar("T")


async def _wait(waiters: list[trio.lowlevel.Task]) -> None:
    """Park the current task in ``waiters`` until ``_wake_one`` takes it out. Cancellation:
    a cancel point; a task that was woken is never cancelled there."""
    task = trio.lowlevel.current_task()
    waiters.append(task)

    def abort(_: Any) -> trio.lowlevel.Abort:
        waiters.remove(task)
        return trio.lowlevel.Abort.SUCCEEDED

    await trio.lowlevel.wait_task_rescheduled(abort)


def _wake_one(waiters: list[trio.lowlevel.Task]) -> None:
    trio.lowlevel.reschedule(waiters.pop(0))


class Inbox(Generic[T]):
    """A FIFO queue of at most ``size`` items; ``close`` ends it: what is queued can still be
    taken, then ``get`` raises ``trio.EndOfChannel``, and ``put`` and ``put_nowait`` raise
    ``trio.ClosedResourceError``."""

    __slots__ = ("_closed", "_getters", "_items", "_putters", "_size")

    def __init__(self, size: int) -> None:
        self._items: list[T] = []
        self._size = size
        self._closed = False
        self._getters: list[trio.lowlevel.Task] = []
        self._putters: list[trio.lowlevel.Task] = []

    def put_nowait(self, item: T) -> bool:
        """Queue ``item`` if there is room; ``False`` (nothing queued) when full."""
        if self._closed:
            raise trio.ClosedResourceError("the inbox is closed")
        if len(self._items) >= self._size:
            return False
        self._items.append(item)
        if self._getters:
            _wake_one(self._getters)
        return True

    async def put(self, item: T) -> None:
        """Queue ``item``, waiting for room as long as it takes. Cancellation: a cancel point
        while it waits (then nothing is queued); not a checkpoint when there is room."""
        while not self.put_nowait(item):
            await _wait(self._putters)

    def ready(self) -> bool:
        """Whether ``get`` returns at once: an item is queued, or the inbox is closed."""
        return bool(self._items) or self._closed

    async def get(self) -> T:
        """The next item, waiting for one as long as it takes. Cancellation: a cancel point
        while it waits (nothing is lost); not a checkpoint when ``ready()``."""
        items = self._items
        while not items:
            if self._closed:
                raise trio.EndOfChannel
            await _wait(self._getters)
        if self._putters:
            _wake_one(self._putters)
        return items.pop(0)

    def close(self) -> None:
        """End the inbox: every waiting task is woken (a getter to drain what is left)."""
        self._closed = True
        while self._getters:
            _wake_one(self._getters)
        while self._putters:
            _wake_one(self._putters)


class SendLock:
    """A lock handed over in the order it was asked for (``trio.StrictFIFOLock``'s rule), for
    tasks of one trio run. ``acquire`` waits only while another task holds it."""

    __slots__ = ("_waiters", "held")

    def __init__(self) -> None:
        self.held = False
        self._waiters: list[trio.lowlevel.Task] = []

    def acquire_nowait(self) -> bool:
        """Take the lock if it is free; ``False`` (not taken) while another task holds it."""
        if self.held:
            return False
        self.held = True
        return True

    async def acquire(self) -> None:
        """Take the lock. Cancellation: a cancel point while it waits (then the lock is not
        taken); not a checkpoint when the lock is free."""
        if self.held:
            await _wait(self._waiters)  # woken by release, which hands the lock over as held
        else:
            self.held = True

    def release(self) -> None:
        """Give the lock to the task that has waited longest, or free it."""
        if self._waiters:
            _wake_one(self._waiters)
        else:
            self.held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()
