"""``BoundedDecoder``: HPACK decoding of a client's header blocks with a fixed hard limit on
a header list's decoded size, and a block of one-byte indexed fields (what a client that
has sent a request before sends for the next) read without hpack's general loop.
Nothing here imports trio.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import hpack
from hpack.table import HeaderTable

__all__ = ["BoundedDecoder"]

_STATIC_LENGTH = HeaderTable.STATIC_TABLE_LENGTH
#: ``hpack.HeaderTuple(name, value)`` without its Python-level ``__new__``
_header_tuple = partial(tuple.__new__, hpack.HeaderTuple)
_STATIC_FIELDS = [_header_tuple(entry) for entry in HeaderTable.STATIC_TABLE]  # immutable


class BoundedDecoder(hpack.Decoder):
    """HPACK decoding with a fixed hard limit on a header list's decoded size (past it the
    connection ends: an HPACK bomb), counting the blocks it decoded. A block of one-byte
    indexed fields only is read without hpack's general loop (``indexed_only``)."""

    def __init__(self, hard_limit: int) -> None:
        self._hard_limit = hard_limit
        self.blocks = 0
        super().__init__(max_header_list_size=hard_limit)

    @property
    def max_header_list_size(self) -> int:
        return self._hard_limit

    @max_header_list_size.setter
    def max_header_list_size(self, value: int) -> None:
        pass  # h2 sets the announced limit on acknowledgement: the hard limit stays

    def decode(self, data: bytes, raw: bool = False) -> Any:
        indexed = self.indexed_only(data) if raw else None
        headers = super().decode(data, raw) if indexed is None else indexed
        self.blocks += 1
        return headers

    def indexed_only(self, data: bytes) -> list[hpack.HeaderTuple] | None:
        """The fields of a block made only of one-byte indexed fields (indexes 1 to 126: a
        request a client has sent before names every field by index), what hpack would
        decode from it; ``None`` for any other block, and for one hpack would refuse (an
        index past the table, a list past the limit, a table still larger than allowed),
        which hpack then decodes or refuses itself."""
        dynamic = self.header_table.dynamic_entries
        headers = []
        size = 0
        for byte in data:
            if not 0x81 <= byte <= 0xFE:
                return None
            index = byte - 0x81
            if index < _STATIC_LENGTH:
                field = _STATIC_FIELDS[index]
            elif index - _STATIC_LENGTH < len(dynamic):
                field = _header_tuple(dynamic[index - _STATIC_LENGTH])
            else:
                return None
            headers.append(field)
            size += len(field[0]) + len(field[1]) + 32
        if size > self._hard_limit or self.header_table._maxsize > self.max_allowed_table_size:
            return None
        return headers
