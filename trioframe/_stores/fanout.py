"""What a ``Broadcast`` hands out in this process: the wire form of a message, each
subscriber's bounded queue (``Subscription``), and the table of local subscribers per channel
(``Fanout``). Shared by the memory and the Redis broadcasts: over Redis, the process's one
listener feeds what Redis sends into the same table."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import trio

__all__ = ["Fanout", "Subscription", "decode", "encode"]

_STR, _BYTES, _JSON = b"s", b"b", b"j"


def encode(message: Any) -> bytes:
    """``message`` as bytes that say its kind: a ``str``, ``bytes`` (or a ``bytearray`` or
    ``memoryview``, received as ``bytes``) or anything else as a JSON value (``TypeError`` or
    ``ValueError`` when it is not one: NaN and infinities are not JSON)."""
    if isinstance(message, str):
        return _STR + message.encode()
    if isinstance(message, bytes | bytearray | memoryview):
        return _BYTES + bytes(message)
    text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _JSON + text.encode()


def decode(payload: bytes) -> Any:
    """The message ``encode`` gave ``payload`` for: a fresh object per call, so that two
    subscribers never share a mutable JSON value."""
    kind, body = payload[:1], payload[1:]
    if kind == _STR:
        return body.decode()
    if kind == _BYTES:
        return body
    if kind == _JSON:
        return json.loads(body)
    raise ValueError(f"not a broadcast message: {payload[:32]!r}")


class Subscription:
    """The messages of one channel for one subscriber, in the order they were published:
    ``async for message in subscription``. Each message is received as the kind it was
    published as: ``str``, ``bytes`` or a JSON value.

    At most ``max_pending`` messages wait to be read; when another one arrives, the oldest
    waiting one is dropped and ``dropped`` (the count so far) goes up. Publishing never waits
    for a subscriber, so a slow one slows down nobody else. The iteration ends once the
    ``async with broadcast.subscribe(...)`` block has exited."""

    __slots__ = ("_closed", "_pending", "_wakeup", "channel", "dropped", "max_pending")

    def __init__(self, channel: str, max_pending: int) -> None:
        #: The channel subscribed to.
        self.channel = channel
        #: How many messages may wait to be read before the oldest is dropped.
        self.max_pending = max_pending
        #: How many messages were dropped so far because the subscriber fell behind.
        self.dropped = 0
        self._pending: deque[bytes] = deque()
        self._wakeup: trio.Event | None = None
        self._closed = False

    def __repr__(self) -> str:
        return (
            f"<Subscription {self.channel!r} pending={len(self._pending)} dropped={self.dropped}>"
        )

    @property
    def pending(self) -> int:
        """How many messages are waiting to be read."""
        return len(self._pending)

    def offer(self, payload: bytes) -> None:
        """Queue an encoded message without waiting, dropping the oldest one when full."""
        if self._closed:
            return
        if len(self._pending) >= self.max_pending:
            self._pending.popleft()
            self.dropped += 1
        self._pending.append(payload)
        self._wake()

    def close(self) -> None:
        """No more messages: the iteration ends (what is still queued is discarded)."""
        self._closed = True
        self._pending.clear()
        self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Any:
        """The next message, waiting for one; a checkpoint even when one is waiting."""
        if self._pending:
            await trio.lowlevel.checkpoint()
        while not self._pending:
            if self._closed:
                raise StopAsyncIteration
            if self._wakeup is None:
                self._wakeup = trio.Event()
            await self._wakeup.wait()
        return decode(self._pending.popleft())


class Fanout:
    """The subscriptions of this process, by channel."""

    __slots__ = ("_channels",)

    def __init__(self) -> None:
        self._channels: dict[str, set[Subscription]] = {}

    def channels(self) -> set[str]:
        """The channels with at least one subscription."""
        return set(self._channels)

    def add(self, subscription: Subscription) -> None:
        self._channels.setdefault(subscription.channel, set()).add(subscription)

    def remove(self, subscription: Subscription) -> bool:
        """Forget ``subscription``; ``True`` when it was its channel's last one."""
        subscription.close()
        members = self._channels.get(subscription.channel)
        if members is None:
            return False
        members.discard(subscription)
        if members:
            return False
        del self._channels[subscription.channel]
        return True

    def deliver(self, channel: str, payload: bytes) -> None:
        """Queue ``payload`` for every subscription to ``channel``, never waiting."""
        for subscription in self._channels.get(channel, ()):
            subscription.offer(payload)
