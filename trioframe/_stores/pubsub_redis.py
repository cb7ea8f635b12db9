"""A ``Broadcast`` over Redis pub/sub (through coredis, which runs on trio via anyio).

``RedisPubSub.run`` is the one task per ``Broadcast`` per process, started in a nursery by
``Broadcast.lifespan``. It keeps a coredis client open (reopened with backoff if it fails)
for ``publish``; on the first ``subscribe`` it also starts the listener: one subscriber
connection for the whole process, whose messages go to the local subscriptions through the
``Fanout``. When that connection breaks, the listener reopens it with backoff and subscribes
again to every channel that still has a local subscriber; what was published meanwhile is
lost (delivery is at most once), and no subscription notices anything else.

Every call that waits for Redis on behalf of a caller is bounded by ``RedisStore.timeout``
and raises ``StoreUnavailable`` past it or on a connection error; nothing else raises into a
caller. The tasks themselves never raise: they log and retry until they are cancelled."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from .._errors import StoreUnavailable
from .fanout import Fanout

if TYPE_CHECKING:
    import coredis

    from .redis import RedisStore

__all__ = ["RedisPubSub"]

log = logging.getLogger("trioframe")

#: The first and the longest wait before reconnecting, in seconds (doubling in between).
MIN_BACKOFF = 0.05
MAX_BACKOFF = 2.0


async def _unless_cancelled(exc: BaseException) -> None:
    """In an ``except BaseException`` clause of a task that retries: re-raise when the task
    is being cancelled, or for ``KeyboardInterrupt`` and the like; return for a failure to
    log and retry. (Cancelled, coredis's cleanup may fail too, on the connection it has
    closed: a group of ``Cancelled`` and ``ClosedResourceError`` that is no failure.)"""
    await trio.lowlevel.checkpoint_if_cancelled()
    if not isinstance(exc, Exception | BaseExceptionGroup) or isinstance(exc, trio.Cancelled):
        raise exc
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(Exception)
        if rest is not None:
            raise exc


class _Backoff:
    """Waits that double from ``MIN_BACKOFF`` up to ``MAX_BACKOFF``; ``reset`` after a success."""

    def __init__(self) -> None:
        self.delay = MIN_BACKOFF

    def reset(self) -> None:
        self.delay = MIN_BACKOFF

    async def wait(self) -> None:
        await trio.sleep(self.delay)
        self.delay = min(self.delay * 2, MAX_BACKOFF)


class RedisPubSub:
    """The Redis side of one running ``Broadcast``: channel ``c`` is the Redis channel
    ``{prefix}broadcast:{c}``."""

    def __init__(self, store: RedisStore, fanout: Fanout) -> None:
        self._url = store.url
        self._timeout = store.timeout
        self._prefix = f"{store.prefix}broadcast:"
        self._fanout = fanout
        self._client: coredis.Redis[bytes] | None = None
        #: Set while ``_client`` is open; replaced by a fresh one when it closes.
        self._client_ready = trio.Event()
        self._client_nursery: trio.Nursery | None = None
        self._listening = False
        #: The channels the current subscriber connection is subscribed to.
        self._confirmed: set[str] = set()
        #: Set to tell the listener that the channels wanted have changed.
        self._changed = trio.Event()
        #: Set (and replaced) whenever ``_confirmed`` changes.
        self._synced = trio.Event()

    # -- what callers use ---------------------------------------------------------------------
    async def publish(self, channel: str, payload: bytes) -> None:
        """PUBLISH ``payload``; ``StoreUnavailable`` when Redis does not take it in time."""
        try:
            with trio.fail_after(self._timeout):
                await self._client_ready.wait()
                assert self._client is not None
                await self._client.publish(self._prefix + channel, payload)
        except trio.TooSlowError:
            raise StoreUnavailable(
                f"Redis did not take a broadcast within {self._timeout:g} s"
            ) from None
        except Exception as exc:  # coredis's ConnectionError, anyio's stream errors, ...
            raise StoreUnavailable(f"Redis refused a broadcast: {exc}") from exc

    async def subscribed(self, channel: str) -> None:
        """Return once the subscriber connection is subscribed to ``channel`` (a local
        subscription to it is registered in the ``Fanout`` already); ``StoreUnavailable``
        when that takes longer than the store's timeout."""
        self._listen()
        self._changed.set()
        with trio.move_on_after(self._timeout):
            while channel not in self._confirmed:
                await self._synced.wait()
            return
        raise StoreUnavailable(f"Redis did not confirm a subscription within {self._timeout:g} s")

    def unsubscribed(self) -> None:
        """A channel lost its last local subscriber: the listener unsubscribes from it."""
        self._changed.set()

    # -- the tasks ------------------------------------------------------------------------------
    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep a client open until cancelled; the listener runs inside it once wanted."""
        import coredis

        task_status.started()
        backoff = _Backoff()
        while True:
            try:
                client: coredis.Redis[bytes] = coredis.Redis.from_url(
                    self._url, connect_timeout=self._timeout
                )
                async with client, trio.open_nursery() as nursery:
                    self._client, self._client_nursery = client, nursery
                    self._client_ready.set()
                    backoff.reset()
                    if self._listening:
                        nursery.start_soon(self._listen_forever, client)
                    await trio.sleep_forever()
            except BaseException as exc:
                await _unless_cancelled(exc)
                log.warning("broadcast: the Redis client at %s failed: %r", self._url, exc)
            finally:
                self._client = self._client_nursery = None
                self._client_ready = trio.Event()
            await backoff.wait()

    def _listen(self) -> None:
        """Start the listener, once (it is restarted with the client if that fails)."""
        if self._listening:
            return
        self._listening = True
        if self._client is not None and self._client_nursery is not None:
            self._client_nursery.start_soon(self._listen_forever, self._client)

    async def _listen_forever(self, client: coredis.Redis[bytes]) -> None:
        backoff = _Backoff()
        while True:
            try:
                async with (
                    client.pubsub(
                        retry_policy=None,
                        ignore_subscribe_messages=True,
                        subscription_timeout=self._timeout,
                    ) as pubsub,
                    trio.open_nursery() as nursery,
                ):
                    backoff.reset()
                    nursery.start_soon(self._follow_channels, pubsub)
                    while True:
                        message = await pubsub.get_message()
                        if message is not None and message["type"] == "message":
                            self._deliver(message)
            except BaseException as exc:
                await _unless_cancelled(exc)
                log.warning(
                    "broadcast: the Redis subscriber connection to %s broke (%r); "
                    "reconnecting in %g s",
                    self._url,
                    exc,
                    backoff.delay,
                )
            finally:
                self._set_confirmed(set())
            await backoff.wait()

    def _deliver(self, message: Any) -> None:
        name = message["channel"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        if name.startswith(self._prefix):
            data = message["data"]
            self._fanout.deliver(name[len(self._prefix) :], bytes(data))

    async def _follow_channels(self, pubsub: Any) -> None:
        """Subscribe the connection to the channels with local subscribers, and unsubscribe
        it from the others, whenever they change. A failure breaks the connection."""
        while True:
            changed = self._changed = trio.Event()
            wanted = self._fanout.channels()
            new = wanted - self._confirmed
            if new:
                await pubsub.subscribe(*(self._prefix + channel for channel in new))
                self._set_confirmed(self._confirmed | new)
            gone = self._confirmed - self._fanout.channels()
            if gone:
                self._set_confirmed(self._confirmed - gone)
                await pubsub.unsubscribe(*(self._prefix + channel for channel in gone))
            await changed.wait()

    def _set_confirmed(self, channels: set[str]) -> None:
        self._confirmed = channels
        self._synced.set()
        self._synced = trio.Event()
