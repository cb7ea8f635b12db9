"""``RedisStore``: state kept in Redis or Valkey, through coredis."""

from __future__ import annotations

import math

from .._errors import ConfigurationError

__all__ = ["RedisStore"]


class RedisStore:
    """State kept in Redis (or Valkey) at ``url``, under keys starting with ``prefix``: one
    limit, one session table and one broadcast for every worker and every machine that uses
    the same server. ``timeout`` bounds every call (``StoreUnavailable`` past it).

    ``ConfigurationError`` without coredis (``pip install 'trioframe[redis]'``) or for a URL
    that is not ``redis://``, ``rediss://`` or ``unix://``."""

    __slots__ = ("prefix", "timeout", "url")

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
