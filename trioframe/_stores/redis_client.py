"""The coredis client behind a ``RedisStore``: opened lazily, once per trio run, in a system
task that owns it (coredis clients are async context managers whose connection pool lives in
a task group, bound to the run that opened it); every call bounded by the store's timeout,
its failures turned into ``StoreUnavailable``, and reconnection after a failure paced by an
exponential backoff.

Anything that talks to Redis for a store (the store's own operations, a publish/subscribe
feature) goes through :meth:`RedisClient.call` with a function of the coredis client.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import trio

from .._errors import StoreUnavailable

if TYPE_CHECKING:
    import coredis

__all__ = ["BACKOFF_MAX", "BACKOFF_MIN", "RedisClient"]

T = TypeVar("T")
log = logging.getLogger("trioframe.stores")

#: After a failure, calls fail at once (no attempt) for BACKOFF_MIN seconds, doubling with
#: each further failure up to BACKOFF_MAX; then one call tries again while the others still
#: fail at once. A success resets it.
BACKOFF_MIN = 0.05
BACKOFF_MAX = 1.0
#: What the client is told (the log says which server and why; the response does not).
UNAVAILABLE = "store unavailable"
#: Connections the pool may open (coredis multiplexes commands over them).
MAX_CONNECTIONS = 8


class _Link:
    """One run's client and health."""

    __slots__ = ("client", "failures", "probing", "ready", "retry_at")

    def __init__(self) -> None:
        self.client: coredis.Redis[bytes] | None = None
        self.ready: trio.Event | None = None  # set once ``client`` is open (or failed to)
        self.failures = 0
        self.retry_at = -float("inf")
        self.probing = False


class RedisClient:
    """The connection to the Redis server at ``url`` for one store: ``await
    client.call(lambda redis: redis.get(key))``. Raises ``StoreUnavailable`` when the call
    fails, takes longer than ``timeout`` seconds, or comes while the server is known to be
    unreachable (between two attempts of the backoff)."""

    __slots__ = ("_runs", "failures", "timeout", "url")

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        #: how many calls failed (timed out, could not connect, lost the connection), in
        #: every run
        self.failures = 0
        self._runs: trio.lowlevel.RunVar[_Link] = trio.lowlevel.RunVar("trioframe.redis")

    async def call(self, operation: Callable[[coredis.Redis[bytes]], Awaitable[T]]) -> T:
        try:
            link = self._runs.get()
        except LookupError:
            link = _Link()
            self._runs.set(link)
        if link.failures:
            if link.probing or trio.current_time() < link.retry_at:
                await trio.lowlevel.checkpoint()
                raise StoreUnavailable(UNAVAILABLE)
            link.probing = True
        try:
            with trio.fail_after(self.timeout):
                result = await operation(await self._open(link))
        except trio.TooSlowError:
            self._failed(link, f"no answer within {self.timeout} s")
            raise StoreUnavailable(UNAVAILABLE) from None
        except Exception as error:
            self._failed(link, repr(error))
            raise StoreUnavailable(UNAVAILABLE) from error
        finally:
            link.probing = False
        if link.failures:
            log.warning("Redis at %s answers again", self._where())
            link.failures = 0
        return result

    async def _open(self, link: _Link) -> coredis.Redis[bytes]:
        if link.ready is None:
            link.ready = trio.Event()
            trio.lowlevel.spawn_system_task(self._own, link, name=f"RedisClient {self._where()}")
        await link.ready.wait()
        if link.client is None:
            raise ConnectionError("the Redis client could not be opened")
        return link.client

    async def _own(self, link: _Link) -> None:
        """The system task that holds the client open for the rest of the run (cancelled
        when the run ends); when the client's pool fails, the next call opens another."""
        import coredis
        import coredis.retry

        assert link.ready is not None
        client: coredis.Redis[bytes] = coredis.Redis.from_url(
            self.url,
            retry_policy=coredis.retry.NoRetryPolicy(),
            connect_timeout=self.timeout,
            pool_timeout=self.timeout,
            max_connections=MAX_CONNECTIONS,
        )
        try:
            async with client:
                link.client = client
                link.ready.set()
                await trio.sleep_forever()
        except Exception as error:  # never out of a system task: that would crash the run
            log.warning("the Redis client for %s stopped: %r", self._where(), error)
        finally:
            link.client = None
            link.ready.set()
            link.ready = None

    def _failed(self, link: _Link, reason: str) -> None:
        self.failures += 1
        link.failures += 1
        delay = min(BACKOFF_MAX, BACKOFF_MIN * 2 ** min(link.failures - 1, 20))
        link.retry_at = trio.current_time() + delay
        level = logging.WARNING if link.failures == 1 else logging.DEBUG
        log.log(
            level, "Redis at %s failed (%s); next attempt in %.2f s", self._where(), reason, delay
        )
        if link.client is not None:
            # Drop the connections: commands still waiting on them are failed now instead
            # of piling up while the server does not answer.
            link.client.connection_pool.disconnect()

    def _where(self) -> str:
        return self.url.rpartition("@")[2]  # never the password
