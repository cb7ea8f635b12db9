"""``Table``: the bounded, expiring key-value table behind ``MemoryStore``."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["Table"]

V = TypeVar("V")


class Table(Generic[V]):
    """At most ``max_keys`` entries, each with the time (any clock, the caller's) it expires
    at; past the bound, the least recently used entry is dropped. An expired entry is dropped
    when it is next looked at, or as the least recently used one."""

    __slots__ = ("_entries", "max_keys")

    def __init__(self, max_keys: int) -> None:
        self.max_keys = max_keys
        #: key -> (value, expiry), least recently used first
        self._entries: OrderedDict[str, tuple[V, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, now: float) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: str, value: V, expiry: float) -> None:
        entries = self._entries
        if key in entries:
            entries.move_to_end(key)
        elif len(entries) >= self.max_keys:
            entries.popitem(last=False)
        entries[key] = (value, expiry)

    def pop(self, key: str) -> None:
        self._entries.pop(key, None)
