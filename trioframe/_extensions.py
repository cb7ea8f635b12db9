"""``Extensions``: the per-request values middleware hands to the layers inside it, keyed by
their type."""

from __future__ import annotations

from typing import Any, TypeVar, overload

__all__ = ["Extensions"]

T = TypeVar("T")


class Extensions:
    """Per-request values keyed by their type: ``insert(value)``, ``get(T)``, ``[T]``.

    ``get(T)`` finds a value of exactly type ``T`` first, then one of a subclass."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[type[Any], Any] = {}

    def insert(self, value: object) -> None:
        """Store ``value`` under its type, replacing a previous value of that type."""
        self._values[type(value)] = value

    @overload
    def get(self, kind: type[T]) -> T | None: ...
    @overload
    def get(self, kind: type[T], default: T) -> T: ...
    def get(self, kind: type[T], default: T | None = None) -> T | None:
        """The value of type ``kind`` (or a subclass), else ``default``."""
        value = self._values.get(kind)
        if value is not None:
            return value  # type: ignore[no-any-return]
        for stored_type, stored in self._values.items():
            if issubclass(stored_type, kind):
                return stored  # type: ignore[no-any-return]
        return default

    def __getitem__(self, kind: type[T]) -> T:
        value = self.get(kind)
        if value is None:
            raise KeyError(kind)
        return value

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, type) and self.get(kind) is not None

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Extensions({list(self._values.values())!r})"
