"""``RateLimitMiddleware``: a token bucket per client, in bounded memory."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import trio

from .._errors import ConfigurationError
from .._response import Response
from ._headers import set_header

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request

__all__ = ["RateLimitMiddleware", "client_host"]

_EPSILON = 1e-9  # float slack, so a bucket refilled "exactly" on time counts as refilled


def client_host(request: Request) -> Hashable:
    """The default key: the client's address (``request.client[0]``); requests without a
    known client share the key ``""``."""
    client = request.client
    return client[0] if client is not None else ""


class RateLimitMiddleware:
    """Allow ``requests`` requests per ``per_seconds`` seconds for each key, with bursts.

    Each key (``key(request)``, by default :func:`client_host`; a key of ``None`` exempts the
    request) has a token bucket holding up to ``requests`` tokens, refilled continuously at
    ``requests / per_seconds`` tokens a second; a request takes one token. Time is
    ``trio.current_time()``, so a mock clock drives it in tests.

    An allowed request's response gets ``RateLimit-Limit`` (``requests``),
    ``RateLimit-Remaining`` (whole tokens left) and ``RateLimit-Reset`` (seconds, rounded up,
    until the bucket is full again). A refused request is answered at once, without running
    the rest of the chain: 429 with the standard error body, the same three headers and
    ``Retry-After`` (seconds, rounded up, until a token is available).

    Memory is bounded: at most ``max_keys`` buckets are kept; past that, the least recently
    used bucket is dropped (its key starts again with a full bucket).

    Cancellation: the token is taken before ``await next(request)`` and not given back when
    the request is cancelled or fails.
    """

    __slots__ = ("_buckets", "_interval", "_key", "_limit", "max_keys", "per_seconds", "requests")

    def __init__(
        self,
        requests: int,
        per_seconds: float,
        key: Callable[[Request], Hashable | None] | None = None,
        *,
        max_keys: int = 10_000,
    ) -> None:
        if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
            raise ConfigurationError(f"requests must be an int >= 1, not {requests!r}")
        if not isinstance(per_seconds, int | float) or not 0 < per_seconds < math.inf:
            raise ConfigurationError(
                f"per_seconds must be positive and finite, not {per_seconds!r}"
            )
        if isinstance(max_keys, bool) or not isinstance(max_keys, int) or max_keys < 1:
            raise ConfigurationError(f"max_keys must be an int >= 1, not {max_keys!r}")
        self.requests = requests
        self.per_seconds = float(per_seconds)
        self.max_keys = max_keys
        self._key = key if key is not None else client_host
        self._interval = self.per_seconds / requests  # seconds per token
        self._limit = (b"ratelimit-limit", b"%d" % requests)
        #: key -> [tokens, time of last update], least recently used first
        self._buckets: OrderedDict[Hashable, list[float]] = OrderedDict()

    @property
    def tracked_keys(self) -> int:
        """How many buckets are held now (never more than ``max_keys``)."""
        return len(self._buckets)

    async def __call__(self, request: Request, next: Next) -> Response:
        key = self._key(request)
        if key is None:
            return await next(request)
        now = trio.current_time()
        buckets = self._buckets
        bucket = buckets.get(key)
        if bucket is None:
            if len(buckets) >= self.max_keys:
                buckets.popitem(last=False)
            bucket = buckets[key] = [float(self.requests), now]
        else:
            buckets.move_to_end(key)
            elapsed = now - bucket[1]
            bucket[0] = min(float(self.requests), bucket[0] + elapsed / self._interval)
            bucket[1] = now
        tokens = bucket[0]
        if tokens < 1.0 - _EPSILON:
            response = Response.error(429, "rate limit exceeded")
            wait = max(1, math.ceil((1.0 - tokens) * self._interval - _EPSILON))
            response.headers.append((b"retry-after", b"%d" % wait))
            return self._tag(response, tokens)
        bucket[0] = tokens = max(0.0, tokens - 1.0)
        return self._tag(await next(request), tokens)

    def _tag(self, response: Response, tokens: float) -> Response:
        """Set the three ``RateLimit-*`` headers (replacing values an inner limiter set)."""
        reset = max(0, math.ceil((self.requests - tokens) * self._interval - _EPSILON))
        set_header(response, *self._limit)
        set_header(response, b"ratelimit-remaining", b"%d" % int(tokens + _EPSILON))
        set_header(response, b"ratelimit-reset", b"%d" % reset)
        return response
