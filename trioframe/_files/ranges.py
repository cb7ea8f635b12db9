"""The ``Range`` request header (RFC 9110 section 14.2) for a file of known size.

``parse_range`` reads a ``bytes=`` range set in one pass over its elements and stops at the
17th: a request for more than ``MAX_RANGES`` ranges gets the whole file, so neither the parse
nor the merge can be made to cost more than a few comparisons. What it answers:

- ``None``: serve the whole file (200). No header, a unit other than ``bytes``, a syntax error
  anywhere in the set (``bytes=5-4`` included: RFC 9110 calls a last position before the first
  invalid, and a server may ignore an invalid ``Range``), or more than ``MAX_RANGES`` ranges.
- ``UNSATISFIABLE``: the set is valid but no range overlaps the file (416, with
  ``Content-Range: bytes */size``).
- A list of ``(first, last)`` byte positions, inclusive, sorted, with overlapping and adjacent
  ranges merged: one element means a single part (206 with ``Content-Range``), more a
  ``multipart/byteranges`` body.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_RANGES", "UNSATISFIABLE", "parse_range"]

#: More ranges than this in one request: the whole file is sent instead.
MAX_RANGES: Final = 16


class _Unsatisfiable:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSATISFIABLE"


UNSATISFIABLE: Final = _Unsatisfiable()

_DIGITS = frozenset("0123456789")


def _position(text: str) -> int | None:
    """A 1*DIGIT position, or ``None`` when ``text`` is anything else (signs, spaces,
    underscores and non-ASCII digits, which ``int`` would accept, included)."""
    if not text or len(text) > 19 or not _DIGITS.issuperset(text):
        return None
    return int(text)


def parse_range(value: str | None, size: int) -> list[tuple[int, int]] | _Unsatisfiable | None:
    """What to send for ``Range: value`` of a ``size``-byte file (see the module docstring)."""
    if value is None:
        return None
    unit, equals, ranges_text = value.partition("=")
    if not equals or unit.strip(" \t").lower() != "bytes":
        return None
    wanted: list[tuple[int, int]] = []
    count = 0
    for element in ranges_text.split(",", MAX_RANGES + 1):
        spec = element.strip(" \t")
        if not spec:
            continue  # RFC 9110 5.6.1: empty list elements are allowed and ignored
        count += 1
        if count > MAX_RANGES:
            return None
        first_text, dash, last_text = spec.partition("-")
        if not dash:
            return None
        if first_text:  # first-last or first-
            first = _position(first_text)
            if first is None:
                return None
            if last_text:
                last = _position(last_text)
                if last is None or last < first:
                    return None
            else:
                last = size - 1
            if first < size:
                wanted.append((first, min(last, size - 1)))
        else:  # -suffix: the last suffix bytes
            suffix = _position(last_text)
            if suffix is None:
                return None
            if suffix > 0 and size > 0:
                wanted.append((max(size - suffix, 0), size - 1))
    if count == 0:
        return None  # "bytes=" or "bytes=,": no range at all is a syntax error
    if not wanted:
        return UNSATISFIABLE
    return _merged(wanted)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` sorted, overlapping or adjacent ones joined (at most ``MAX_RANGES``)."""
    ranges.sort()
    merged = [ranges[0]]
    for first, last in ranges[1:]:
        previous_first, previous_last = merged[-1]
        if first <= previous_last + 1:
            merged[-1] = (previous_first, max(previous_last, last))
        else:
            merged.append((first, last))
    return merged
