"""``StreamReader``: the one reader of a connection's stream.

trio allows one task in ``receive_some`` at a time, and two tasks want to read an HTTP/1.1
connection: the request loop (heads and bodies) and, while a handler runs, a watcher that
reads ahead so a client that goes away is noticed at once. Every read goes through here;
whoever needs bytes while the other task is reading waits for that read instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from ..._protocol.http1_base import BaseHTTP1Adapter
from ..transport import RECEIVE_SIZE, Transport

__all__ = ["HIGH_WATER", "RECEIVE_SIZE", "StreamReader", "linger_close"]

HIGH_WATER = 256 * 1024  # the watcher stops reading ahead past this many unparsed bytes
#: The watcher task's name (a constant: trio would format a new string for every task)
WATCHER_NAME = "trioframe: HTTP/1.1 disconnect watcher"


class StreamReader:
    """Feeds ``adapter`` from ``transport``. ``on_eof`` runs when the peer closes its side.

    The watcher task is started in ``watcher_nursery`` the first time an exchange blocks
    (``wake_watcher``), not with the connection: a connection whose handlers never wait
    never has one, and holds one task fewer while it waits for its next request."""

    __slots__ = (
        *("_on_eof", "_reading", "_waiting", "_watcher", "_watching", "adapter"),
        *("reading_ahead", "transport", "watcher_nursery"),
    )

    def __init__(
        self, transport: Transport, adapter: BaseHTTP1Adapter, on_eof: Callable[[], None]
    ) -> None:
        self.transport = transport
        self.adapter = adapter
        self._on_eof = on_eof
        #: the watcher reads ahead: an exchange runs and its response is not out yet (the
        #: connection turns it on, the exchange off once answered)
        self.reading_ahead = False
        #: the task waiting for the current read: the connection's own (the watcher reads
        #: only when no other task does, so it never waits for another's read)
        self._waiting: trio.lowlevel.Task | None = None
        self._watcher: trio.lowlevel.Task | None = None  # set while the watcher sleeps
        self._watching = False  # the watcher task has been started
        #: where the watcher task starts, once it is needed (the connection's nursery, which
        #: ``stop_watching`` cancels)
        self.watcher_nursery: trio.Nursery | None = None
        self._reading = False  # a task is waiting for bytes

    def read_now(self) -> bool:
        """Take into the adapter what has arrived, without waiting; False when nothing had
        (or another task is waiting for bytes). Not a checkpoint."""
        if self._reading:
            return False
        data = self.transport.receive_now()
        if data is None:
            return False
        self._received(data)
        return True

    def _received(self, data: bytes | bytearray) -> None:
        self.adapter.receive_data(data)
        waiting = self._waiting
        if waiting is not None:
            self._waiting = None
            trio.lowlevel.reschedule(waiting)
        if not data:
            self._on_eof()

    async def fill(self) -> None:
        """Wait for more bytes in the adapter: read them (``b""``: end of stream), or wait for
        the read another task is in. Call it after ``read_now`` found nothing (it does not
        look before waiting)."""
        if self._reading:
            await self._park()
            return
        self._reading = True
        try:
            data = await self.transport.receive()
        finally:
            self._reading = False
        self._received(data)

    async def _park(self) -> None:
        """Wait for the read another task is in (woken by ``_received``). Cancellation: a
        plain wait."""
        assert self._waiting is None, "a second task waits for the same read"
        self._waiting = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._waiting = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def wake_watcher(self) -> None:
        """Let the watcher read ahead (a handler runs and has blocked): wake it, or start it
        in ``watcher_nursery`` the first time."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            trio.lowlevel.reschedule(watcher)
        elif not self._watching:
            assert self.watcher_nursery is not None, "no nursery to start the watcher in"
            self._watching = True
            self.watcher_nursery.start_soon(self.watch, name=WATCHER_NAME)

    def stop_watching(self) -> None:
        """End the watcher task, if it was started (whatever it is doing), by cancelling
        ``watcher_nursery``: call it once the connection task is done with that nursery."""
        if self._watching:
            assert self.watcher_nursery is not None
            self.watcher_nursery.cancel_scope.cancel()

    async def watch(self) -> None:
        """The watcher task (``wake_watcher`` starts it, ``stop_watching`` ends it): sleeps
        until woken, then reads while ``reading_ahead`` holds, the stream is open and fewer
        than ``HIGH_WATER`` bytes wait unparsed."""
        adapter = self.adapter

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._watcher = None
            return trio.lowlevel.Abort.SUCCEEDED

        while True:
            # Looks before it sleeps: a handler may have started before this task ran.
            while (
                self.reading_ahead
                and not self._reading
                and not adapter.eof
                and adapter.buffered < HIGH_WATER
            ):
                await self.fill()
            self._watcher = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(abort)

    async def receive_raw(self) -> bytes:
        """After a protocol switch: the next received bytes, taken out of the adapter, ``b""``
        at the end of the stream. Waits for a read the watcher already started."""
        adapter = self.adapter
        if self._reading:
            await self._park()
        if adapter.buffered or adapter.eof:
            return adapter.take_buffered()
        return bytes(await self.transport.receive())


async def linger_close(stream: trio.abc.Stream) -> None:
    """Before closing a connection that may still have unread input: half-close, then read
    and drop until the peer closes. Closing with unread input makes the kernel send RST, which
    can destroy the answer just sent. The caller bounds the time."""
    send_eof = getattr(stream, "send_eof", None)
    try:
        if send_eof is not None:
            await send_eof()
        while await stream.receive_some(RECEIVE_SIZE):
            pass
    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
        pass
