"""``RedisStore``: state kept in Redis or Valkey, through coredis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from .base import Rate
from .gcra import LUA, LUA_SHA
from .redis_client import RedisClient

if TYPE_CHECKING:
    import coredis

__all__ = ["RedisStore"]


class RedisStore:
    """State kept in Redis (or Valkey) at ``url``, under keys starting with ``prefix``: one
    limit, one session table and one broadcast for every worker and every machine that uses
    the same server. ``timeout`` bounds every call (``StoreUnavailable`` past it).

    ``ConfigurationError`` without coredis (``pip install 'trioframe[redis]'``) or for a URL
    that is not ``redis://``, ``rediss://`` or ``unix://``."""

    __slots__ = ("client", "prefix", "timeout", "url")

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "trioframe:",
        timeout: float = 1.0,
    ) -> None:
        try:
            import coredis  # noqa: F401
        except ImportError:
            raise ConfigurationError(
                "RedisStore needs coredis: pip install 'trioframe[redis]'"
            ) from None
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigurationError(
                f"RedisStore url must start with redis://, rediss:// or unix://, not {url!r}"
            )
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ConfigurationError(f"RedisStore timeout must be positive, not {timeout!r}")
        self.url = url
        self.prefix = prefix
        self.timeout = float(timeout)
        #: the connection (opened at the first call in each trio run)
        self.client = RedisClient(url, self.timeout)

    async def rate(self, key: str, interval_us: int, period_us: int) -> Rate:
        from coredis.exceptions import NoScriptError

        name = self.prefix + key

        async def check(redis: coredis.Redis[bytes]) -> Any:
            try:
                return await redis.evalsha(LUA_SHA, [name], [interval_us, period_us])
            except NoScriptError:  # a new or restarted server: send the script itself
                return await redis.eval(LUA, [name], [interval_us, period_us])

        allowed, remaining, reset_us, retry_us = await self.client.call(check)
        return Rate(allowed == 1, remaining, reset_us, retry_us)

    async def get(self, key: str) -> bytes | None:
        return await self.client.call(lambda redis: redis.get(self.prefix + key))

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        milliseconds = max(1, math.ceil(ttl * 1000))
        await self.client.call(lambda redis: redis.set(self.prefix + key, value, px=milliseconds))

    async def delete(self, key: str) -> None:
        await self.client.call(lambda redis: redis.delete([self.prefix + key]))
