"""``Header``, the ``(name, value)`` byte pair every layer passes fields as, and ``Headers``,
the case-insensitive multi-mapping handlers see.

``Headers`` is built over the raw ``(name, value)`` byte pairs the protocol layer produced (names already
lower-case); values are decoded as ISO-8859-1 on access, as HTTP defines them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["Header", "Headers", "RawHeaders"]

#: One header field as the protocol layer carries it: ``(name, value)`` bytes.
Header = tuple[bytes, bytes]
#: The fields of one head, in arrival order.
RawHeaders = Sequence[Header]


class Headers:
    """Request headers: ``.get(name)``, ``.get_all(name)``, ``name in headers``, iteration
    over the distinct lower-case names, ``.items()`` pairs in arrival order.

    Look-ups are case-insensitive. ``Response.json(headers)`` renders an object of names to
    values, repeated headers joined with ``", "``.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: RawHeaders | None = None) -> None:
        self._raw: RawHeaders = raw if raw is not None else ()

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[str, str]]) -> Headers:
        """Build from ``str`` pairs (names are lower-cased)."""
        return cls([(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs])

    @property
    def raw(self) -> RawHeaders:
        """The ``(name, value)`` byte pairs as received (names lower-case)."""
        return self._raw

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of ``name``, or ``default`` when absent."""
        key = name.lower().encode("latin-1")
        for k, v in self._raw:
            if k == key:
                return v.decode("latin-1")
        return default

    def get_all(self, name: str) -> list[str]:
        """Every value of ``name`` in arrival order (empty when absent)."""
        key = name.lower().encode("latin-1")
        return [v.decode("latin-1") for k, v in self._raw if k == key]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        key = name.lower().encode("latin-1")
        return any(k == key for k, _ in self._raw)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def items(self) -> list[tuple[str, str]]:
        """All ``(name, value)`` pairs, repeated names included, in arrival order."""
        return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in self._raw]

    def to_dict(self) -> dict[str, str]:
        """Names to values, repeated headers joined with ``", "`` (the JSON form)."""
        out: dict[str, str] = {}
        for k, v in self._raw:
            name, value = k.decode("latin-1"), v.decode("latin-1")
            out[name] = f"{out[name]}, {value}" if name in out else value
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return list(self._raw) == list(other._raw)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Headers({self.items()!r})"
