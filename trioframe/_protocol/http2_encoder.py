"""``FieldEncoder``: HPACK encoding of response heads without the dynamic table, each field's
encoding computed once per process.

hpack's own encoder indexes every field it sends into the connection's dynamic table, so a
field's encoding depends on what was sent before: nothing can be reused, and a field that
changes every second (``date``) or every response (``content-length``) evicts the entries that
would have been worth keeping. ``FieldEncoder`` never adds to the dynamic table: a field is
either a full match in the static table (one byte, ``:status: 200``) or a literal *without
indexing* (RFC 7541 section 6.2.2) whose name is a static index where there is one and whose
value is Huffman-coded. Such an encoding is a pure function of the field, so it is kept in one
bounded table shared by every connection of the process and a response head is the join of
its fields' encodings. The dynamic table size updates h2 asks for (the client's
``SETTINGS_HEADER_TABLE_SIZE``) still open the next block, as hpack would emit them. Fields that
may carry secrets (``set-cookie``, ``authorization`` and the like) are sent as never-indexed
literals (section 6.2.3), so that no intermediary indexes them either, and are never kept
(as are fields given as ``hpack.NeverIndexedHeaderTuple``).
Nothing here imports trio.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import hpack
from hpack.hpack import INDEX_NEVER, INDEX_NONE
from hpack.table import HeaderTable

__all__ = ["FieldEncoder"]

#: Fields whose values are credentials: never indexed anywhere, never kept in the cache.
_SECRET = frozenset({b"set-cookie", b"authorization", b"proxy-authorization", b"cookie"})
#: How many encoded fields the process keeps; the table starts afresh when full (a date a
#: second and the lengths of the bodies sent are the fields that keep coming).
CACHE_SIZE = 1024
#: Values longer than this are encoded every time (they are rarely sent twice).
CACHED_VALUE_SIZE = 128
_cache: dict[tuple[bytes, bytes], bytes] = {}  # (name, value): its Huffman-coded encoding


class FieldEncoder(hpack.Encoder):
    """An ``hpack.Encoder`` (h2 sets its table size and calls ``encode``) that never indexes
    (see the module docstring)."""

    def encode(self, headers: Iterable[Any], huffman: bool = True) -> bytes:
        """The header block of ``headers``, ``(name, value)`` pairs of lower-case bytes
        names and bytes values; ``huffman=False`` sends literal values as they are."""
        parts = []
        if self.header_table.resized:
            parts.append(self._encode_table_size_change())
            self.header_table.resized = False
        cache = _cache if huffman else {}
        for field in headers:
            encoded = cache.get(field)
            if encoded is None:
                secret = field[0] in _SECRET or not getattr(field, "indexable", True)
                encoded = self.encode_field(field[0], field[1], huffman, secret=secret)
                if len(field[1]) <= CACHED_VALUE_SIZE and not secret:
                    if len(cache) >= CACHE_SIZE:
                        cache.clear()
                    cache[field] = encoded
            parts.append(encoded)
        return b"".join(parts)

    def encode_field(
        self, name: bytes, value: bytes, huffman: bool = True, *, secret: bool = False
    ) -> bytes:
        """One field's encoding: its static table index, or a literal without indexing
        (never-indexed for a ``secret``), its name a static index where there is one."""
        indexbit = INDEX_NEVER if secret else INDEX_NONE
        by_name = HeaderTable.STATIC_TABLE_MAPPING.get(name)
        if by_name is None:
            return self._encode_literal(name, value, indexbit, huffman)
        index = by_name[1].get(value)
        if index is not None and not secret:
            return self._encode_indexed(index)
        return self._encode_indexed_literal(by_name[0], value, indexbit, huffman)
