"""``FrameWriter``: how a WebSocket session puts its frames on the stream, within
``send_timeout``.

On plain TCP the stream an HTTP/1.1 upgrade gave has ``send_now`` (``Transport.send_now``): a
frame the socket takes whole goes out without waiting and without a checkpoint. Whatever the
socket does not take (and every frame on a stream without ``send_now``: TLS, HTTP/2, memory)
waits in ``send_all``. Rather than a cancel scope around each write (measurably slow on the
echo path), a write that waits records when it began, and a watchdog task, started by the
first such write, gives the connection up under a write that has not finished in time.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

__all__ = ["FrameWriter"]

log = logging.getLogger("trioframe")


class FrameWriter:
    """Writes to ``stream``, one write at a time (the caller's lock sees to that).
    ``give_up`` runs when a write has waited ``send_timeout``: it must close the stream,
    which makes the stuck write fail."""

    __slots__ = (
        "_give_up",
        "_send_now",
        "_stream",
        "_timeout",
        "_watching",
        "_writes",
        "_writing_since",
    )

    def __init__(
        self,
        stream: trio.abc.Stream,
        send_timeout: float,
        give_up: Callable[[], Awaitable[None]],
    ) -> None:
        self._stream = stream
        #: the stream's write that takes what the socket takes without waiting, if it has one
        self._send_now: Callable[[bytes | bytearray], int] | None = getattr(
            stream, "send_now", None
        )
        self._timeout = send_timeout
        self._give_up = give_up
        self._writing_since: float | None = None  # when the write waiting for the socket began
        self._writes = 0  # waiting writes so far: tells the watchdog one write from the next
        self._watching = False  # the watchdog has been started

    async def write(self, data: bytes | bytearray, nursery: trio.Nursery | None) -> bool:
        """Write ``data``: what the socket takes at once, then wait for it to take the rest;
        returns whether it waited. The first write that waits starts the watchdog in
        ``nursery`` (none once the session is ending). ``BrokenResourceError`` or
        ``ClosedResourceError`` when the stream is gone. Cancellation: a checkpoint only when
        it waits; part of ``data`` may have been sent."""
        send_now = self._send_now
        sent = 0 if send_now is None else send_now(data)
        if sent == len(data):
            return False
        self._writes += 1
        self._writing_since = trio.current_time()
        if not self._watching and nursery is not None:
            self._watching = True
            nursery.start_soon(self._watch)
        try:
            await self._stream.send_all(memoryview(data)[sent:] if sent else data)
        finally:
            self._writing_since = None
        return True

    async def _watch(self) -> None:
        """Give the connection up under a write that has waited ``send_timeout`` for the peer
        to read."""
        timeout = self._timeout
        while True:
            since, serial = self._writing_since, self._writes
            if since is None:
                await trio.sleep(timeout)
                continue
            await trio.sleep_until(since + timeout)
            if self._writing_since is not None and self._writes == serial:
                log.info("WebSocket peer did not read for %s s: dropping it", timeout)
                await self._give_up()
                return
