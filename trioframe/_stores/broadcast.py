"""``Broadcast``: publish/subscribe between the tasks of this process (``MemoryStore``) or of
every worker and machine that shares a Redis server (``RedisStore``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import trio

from .._errors import ConfigurationError
from .fanout import Fanout, Subscription, encode
from .memory import MemoryStore
from .pubsub_redis import RedisPubSub
from .redis import RedisStore

__all__ = ["Broadcast", "Subscription"]


class Broadcast:
    """Messages published on a channel reach everyone subscribed to it at that moment: with
    ``MemoryStore()`` (the default) in this process, with ``RedisStore(...)`` in every process
    that uses the same Redis server and ``prefix``.

    ::

        broadcast = Broadcast(store=RedisStore("redis://127.0.0.1:6379/0"))
        router = Router().lifespan(broadcast.lifespan)

        await broadcast.publish("room:lobby", {"from": "ada", "text": "hi"})

        async with broadcast.subscribe("room:lobby") as messages:
            async for message in messages:  # str, bytes or a JSON value, as published
                ...

    Delivery is at most once, in publish order per publisher and channel: a message reaches
    the subscriptions that exist when it is delivered, none that come later, and none at all
    while Redis cannot be reached. Each subscription queues at most ``max_pending`` messages
    (``subscribe`` can say otherwise); past that it loses the oldest and counts them in
    ``Subscription.dropped``. Nobody ever waits for a subscriber.

    Over Redis the broadcast needs a nursery for its connections: register
    ``broadcast.lifespan`` with the router (or enter ``broadcast.lifespan(nursery)``
    yourself). Without it, ``publish`` and ``subscribe`` raise ``ConfigurationError``. With
    ``MemoryStore`` the lifespan does nothing and may be left out."""

    __slots__ = ("_fanout", "_redis", "max_pending", "store")

    def __init__(
        self, store: MemoryStore | RedisStore | None = None, *, max_pending: int = 1000
    ) -> None:
        if store is None:
            store = MemoryStore()
        if not isinstance(store, MemoryStore | RedisStore):
            raise ConfigurationError(
                f"Broadcast store must be a MemoryStore or a RedisStore, not {store!r}"
            )
        _check_max_pending(max_pending)
        self.store = store
        self.max_pending = max_pending
        self._fanout = Fanout()
        self._redis: RedisPubSub | None = None

    def __repr__(self) -> str:
        return f"<Broadcast {type(self.store).__name__} channels={len(self._fanout.channels())}>"

    @asynccontextmanager
    async def lifespan(self, nursery: trio.Nursery) -> AsyncIterator[None]:
        """Run the broadcast's connections in ``nursery`` for the ``async with`` block; the
        signature of a lifespan: ``Router().lifespan(broadcast.lifespan)``.

        Over Redis it starts one task there, which keeps a client for ``publish`` and, from
        the first ``subscribe`` on, this process's one subscriber connection. At the end of
        the block the task is cancelled (under a server, the app nursery's tasks are
        cancelled and finished before any lifespan exits); the subscriptions still open see
        no more messages. One broadcast runs in one lifespan at a time (``ConfigurationError``
        otherwise); it can be entered again after, in another trio run as well."""
        if not isinstance(self.store, RedisStore):
            yield
            return
        if self._redis is not None:
            raise ConfigurationError(f"{self!r} is running already, in another lifespan")
        redis = self._redis = RedisPubSub(self.store, self._fanout)
        scope = trio.CancelScope()

        async def run(*, task_status: trio.TaskStatus[None]) -> None:
            with scope:
                await redis.run(task_status=task_status)

        try:
            await nursery.start(run)
            yield
        finally:
            scope.cancel()
            self._redis = None

    async def publish(self, channel: str, message: Any) -> None:
        """Send ``message`` (a ``str``, ``bytes`` or a JSON value) to the subscribers of
        ``channel``. It waits for nobody: what subscribers have not read yet is queued.

        ``TypeError`` or ``ValueError`` when ``message`` is not one of these. Over Redis,
        ``StoreUnavailable`` (503) when Redis does not take the message within the store's
        ``timeout``: the message is not sent. Cancelling a ``publish`` over Redis may leave
        it sent or not."""
        payload = encode(message)
        redis = self._running_redis()
        if redis is None:
            await trio.lowlevel.checkpoint()
            self._fanout.deliver(channel, payload)
        else:
            await redis.publish(channel, payload)

    def subscribe(
        self, channel: str, *, max_pending: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """``async with broadcast.subscribe(channel) as messages:`` a ``Subscription``
        receiving what is published on ``channel`` from the moment the block is entered
        until it exits; ``max_pending`` overrides the broadcast's.

        Over Redis, entering waits until Redis confirms the subscription, within the store's
        ``timeout`` (``StoreUnavailable`` past it). Once entered, a subscription is never
        broken by Redis going away: the broadcast reconnects and subscribes again, and the
        messages published meanwhile are lost."""
        limit = self.max_pending if max_pending is None else max_pending
        _check_max_pending(limit)
        return self._subscription(channel, limit)

    @asynccontextmanager
    async def _subscription(self, channel: str, max_pending: int) -> AsyncIterator[Subscription]:
        redis = self._running_redis()
        subscription = Subscription(channel, max_pending)
        self._fanout.add(subscription)
        try:
            if redis is None:
                await trio.lowlevel.checkpoint()
            else:
                await redis.subscribed(channel)
            yield subscription
        finally:
            if self._fanout.remove(subscription) and self._redis is not None:
                self._redis.unsubscribed()

    def _running_redis(self) -> RedisPubSub | None:
        """The Redis side while the lifespan runs; ``None`` for a memory broadcast."""
        if not isinstance(self.store, RedisStore):
            return None
        if self._redis is None:
            raise ConfigurationError(
                "a Broadcast over Redis runs in a lifespan: Router().lifespan(broadcast.lifespan)"
                " (or async with broadcast.lifespan(nursery): ...)"
            )
        return self._redis


def _check_max_pending(max_pending: int) -> None:
    if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
        raise ConfigurationError(f"max_pending must be a positive int, not {max_pending!r}")
