"""The store interface every shared-state feature uses: ``Store``, a small ``Protocol`` that
``MemoryStore`` and ``RedisStore`` implement, and the answer of a rate check, ``Rate``.

Keys are ``str``; each store puts its ``prefix`` in front of them. Values are ``bytes``. A
call that cannot reach the store in time raises ``StoreUnavailable`` (503 when unhandled).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Rate", "Store"]


class Rate:
    """The answer of :meth:`Store.rate`: whether the request is ``allowed``, how many more
    would be now (``remaining``), and in microseconds how long until the key is back to a
    full allowance (``reset_us``) and, when refused, until one request would be allowed
    (``retry_us``, 0 when allowed)."""

    __slots__ = ("allowed", "remaining", "reset_us", "retry_us")

    def __init__(self, allowed: bool, remaining: int, reset_us: int, retry_us: int) -> None:
        self.allowed = allowed
        self.remaining = remaining
        self.reset_us = reset_us
        self.retry_us = retry_us

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rate):
            return NotImplemented
        return (self.allowed, self.remaining, self.reset_us, self.retry_us) == (
            other.allowed,
            other.remaining,
            other.reset_us,
            other.retry_us,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Rate(allowed={self.allowed}, remaining={self.remaining}, "
            f"reset_us={self.reset_us}, retry_us={self.retry_us})"
        )


class Store(Protocol):
    """Where state shared between requests lives. Every call is bounded in time; a store
    that cannot answer raises ``StoreUnavailable``."""

    prefix: str

    async def rate(self, key: str, interval_us: int, period_us: int) -> Rate:
        """Check and count one request against ``key`` in one atomic step: at most
        ``period_us / interval_us`` requests at once, then one every ``interval_us``
        microseconds (GCRA, see ``trioframe._stores.gcra``). A refused request is not
        counted."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The value under ``key``, or ``None`` when there is none (or it expired)."""
        ...

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds (replacing any value)."""
        ...

    async def delete(self, key: str) -> None:
        """Remove ``key`` (nothing happens when there is none)."""
        ...
