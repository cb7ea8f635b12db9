"""``MemoryStore``: state kept in this process."""

from __future__ import annotations

import trio

from .._errors import ConfigurationError
from .base import Rate
from .gcra import decide
from .table import Table

__all__ = ["MemoryStore"]


class MemoryStore:
    """State kept in this process: nothing to install or run, shared by nothing else (with
    ``workers > 1`` each worker has its own). Its time is ``trio.current_time()``, so a mock
    clock drives it in tests.

    Memory is bounded: at most ``max_keys`` rate-limit keys and ``max_keys`` values are
    kept; past that, the least recently used is dropped (a dropped rate key starts again
    with its full allowance, a dropped session is logged out)."""

    __slots__ = ("_rates", "_values", "max_keys", "prefix")

    def __init__(self, *, max_keys: int = 10_000) -> None:
        if isinstance(max_keys, bool) or not isinstance(max_keys, int) or max_keys < 1:
            raise ConfigurationError(f"max_keys must be an int >= 1, not {max_keys!r}")
        self.max_keys = max_keys
        self.prefix = ""
        self._rates: Table[int] = Table(max_keys)
        self._values: Table[bytes] = Table(max_keys)

    @property
    def tracked_keys(self) -> int:
        """How many rate-limit keys are held now (never more than ``max_keys``)."""
        return len(self._rates)

    async def rate(self, key: str, interval_us: int, period_us: int) -> Rate:
        now = round(trio.current_time() * 1_000_000)
        rate, new_tat = decide(self._rates.get(key, now), now, interval_us, period_us)
        if new_tat is not None:
            self._rates.put(key, new_tat, new_tat)
        return rate

    async def get(self, key: str) -> bytes | None:
        return self._values.get(key, trio.current_time())

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self._values.put(key, value, trio.current_time() + ttl)

    async def delete(self, key: str) -> None:
        self._values.pop(key)
