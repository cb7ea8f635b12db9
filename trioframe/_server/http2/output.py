"""The output side of one HTTP/2 connection: what is queued for the client, the wake-ups of
the task that writes it, and the tasks waiting for the queue to drain below its bound."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from ..._protocol.http2 import HTTP2Adapter

__all__ = ["Output"]


class Output:
    """The writer's side of ``adapter``'s output queue. ``bound`` is the queued size past
    which senders and the reader wait (``park``) until a write drains it."""

    __slots__ = ("_parked", "_wanted", "adapter", "bound", "writing")

    def __init__(self, adapter: HTTP2Adapter, bound: int) -> None:
        self.adapter = adapter
        self.bound = bound
        self.writing = False  # a write is in progress (what it took is no longer queued)
        self._wanted = trio.Event()
        self._parked = trio.lowlevel.ParkingLot()

    @property
    def over_bound(self) -> bool:
        return self.adapter.pending > self.bound

    def wake(self) -> None:
        """Let the writer write what is queued."""
        self._wanted.set()

    async def park(self) -> None:
        """Wait until the next write ends (or ``release``). Cancellation: a checkpoint."""
        await self._parked.park()

    def release(self) -> None:
        """End every ``park`` (the connection is lost)."""
        self._parked.unpark_all()

    async def write_all(self, stream: trio.abc.Stream, send_timeout: float) -> None:
        """The writer: write whatever is queued, one write per wake-up (frames of every stream
        together). Returns when a write fails or takes longer than ``send_timeout``.
        Cancellation: ends the writer (a write in progress is abandoned)."""
        adapter = self.adapter
        with trio.CancelScope() as scope:
            while True:
                await self._wanted.wait()
                self._wanted = trio.Event()
                data = adapter.data_to_send()
                if not data:
                    continue
                scope.deadline = trio.current_time() + send_timeout
                self.writing = True
                try:
                    await stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                finally:
                    self.writing = False
                scope.deadline = math.inf
                self._parked.unpark_all()  # senders, the reader and flush check again
