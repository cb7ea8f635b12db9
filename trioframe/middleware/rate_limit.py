"""``RateLimitMiddleware``: requests per key and period, counted in a store (this process's
memory by default, or Redis for a whole fleet)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Literal

from .._errors import ConfigurationError, StoreUnavailable
from .._response import Response
from .._stores.memory import MemoryStore
from ._headers import set_header

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._stores.base import Rate, Store

__all__ = ["RateLimitMiddleware", "client_host"]

log = logging.getLogger("trioframe.ratelimit")


def client_host(request: Request) -> Hashable:
    """The default key: the client's address (``request.client[0]``); requests without a
    known client share the key ``""``."""
    client = request.client
    return client[0] if client is not None else ""


class RateLimitMiddleware:
    """Allow ``requests`` requests per ``per_seconds`` seconds for each key, with bursts.

    Each key (``key(request)``, by default :func:`client_host`; a key of ``None`` exempts the
    request; its ``str()`` is what the store keeps) may make ``requests`` requests at once,
    then one every ``per_seconds / requests`` seconds (GCRA: the same allowance as a token
    bucket of ``requests`` tokens refilled continuously). Each check is one atomic operation
    of ``store``: ``MemoryStore()`` by default (this process; time is
    ``trio.current_time()``, so a mock clock drives it in tests), or a ``RedisStore`` so that
    every worker and machine shares one limit (time is the Redis server's).

    An allowed request's response gets ``RateLimit-Limit`` (``requests``),
    ``RateLimit-Remaining`` (requests left now) and ``RateLimit-Reset`` (seconds, rounded
    up, until the full allowance is back). A refused request is answered at once, without
    running the rest of the chain: 429 with the standard error body, the same three headers
    and ``Retry-After`` (seconds, rounded up, until a request would be allowed).

    When the store cannot answer (``StoreUnavailable``), ``on_store_error="allow"`` lets the
    request through without headers and ``"deny"`` answers 503; either way it is logged
    (``trioframe.ratelimit``) and counted in :attr:`store_errors`, and the next requests try
    the store again.

    ``max_keys`` bounds the default store (10,000 keys; past that the least recently used
    key is dropped and starts again with its full allowance). With ``store=``, set the bound
    on the ``MemoryStore`` itself.

    Cancellation: the request is counted before ``await next(request)`` and not given back
    when the request is cancelled or fails.
    """

    __slots__ = (
        "_failing",
        "_interval_us",
        "_key",
        "_limit",
        "_name",
        "_period_us",
        "on_store_error",
        "per_seconds",
        "requests",
        "store",
        "store_errors",
    )

    def __init__(
        self,
        requests: int,
        per_seconds: float,
        key: Callable[[Request], Hashable | None] | None = None,
        *,
        store: Store | None = None,
        on_store_error: Literal["allow", "deny"] = "allow",
        max_keys: int | None = None,
    ) -> None:
        if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
            raise ConfigurationError(f"requests must be an int >= 1, not {requests!r}")
        if not isinstance(per_seconds, int | float) or not 0 < per_seconds < math.inf:
            raise ConfigurationError(
                f"per_seconds must be positive and finite, not {per_seconds!r}"
            )
        if on_store_error not in ("allow", "deny"):
            raise ConfigurationError(
                f'on_store_error must be "allow" or "deny", not {on_store_error!r}'
            )
        if store is None:
            store = MemoryStore(max_keys=10_000 if max_keys is None else max_keys)
        elif max_keys is not None:
            raise ConfigurationError("with store=, set max_keys on the MemoryStore instead")
        self.requests = requests
        self.per_seconds = float(per_seconds)
        self.store = store
        self.on_store_error = on_store_error
        #: how many checks the store could not answer
        self.store_errors = 0
        self._failing = False
        self._key = key if key is not None else client_host
        self._interval_us = max(1, round(self.per_seconds * 1_000_000 / requests))
        self._period_us = self._interval_us * requests
        # Limiters with the same settings share their keys in a shared store (the same
        # limiter in every instance of an application).
        self._name = f"ratelimit:{requests}/{self._period_us}:"
        self._limit = (b"ratelimit-limit", b"%d" % requests)

    @property
    def max_keys(self) -> int | None:
        """The bound of a memory store (``None`` for other stores)."""
        return self.store.max_keys if isinstance(self.store, MemoryStore) else None

    @property
    def tracked_keys(self) -> int:
        """How many keys a memory store holds now (never more than its ``max_keys``; 0 for
        other stores)."""
        return self.store.tracked_keys if isinstance(self.store, MemoryStore) else 0

    async def __call__(self, request: Request, next: Next) -> Response:
        key = self._key(request)
        if key is None:
            return await next(request)
        try:
            rate = await self.store.rate(self._name + str(key), self._interval_us, self._period_us)
        except StoreUnavailable:
            self._store_failed()
            if self.on_store_error == "deny":
                raise
            return await next(request)
        if self._failing:
            self._failing = False
            log.warning("rate limit store answers again: limiting again")
        if not rate.allowed:
            response = Response.error(429, "rate limit exceeded")
            wait = max(1, -(-rate.retry_us // 1_000_000))
            response.headers.append((b"retry-after", b"%d" % wait))
            return self._tag(response, rate)
        return self._tag(await next(request), rate)

    def _store_failed(self) -> None:
        self.store_errors += 1
        if not self._failing:
            self._failing = True
            log.warning(
                "rate limit store unavailable: %s requests until it answers",
                "allowing" if self.on_store_error == "allow" else "refusing (503)",
            )

    def _tag(self, response: Response, rate: Rate) -> Response:
        """Set the three ``RateLimit-*`` headers (replacing values an inner limiter set)."""
        set_header(response, *self._limit)
        set_header(response, b"ratelimit-remaining", b"%d" % rate.remaining)
        set_header(response, b"ratelimit-reset", b"%d" % -(-rate.reset_us // 1_000_000))
        return response
