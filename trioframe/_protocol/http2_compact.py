"""h2's and hpack's per-connection containers in a compact form.

h2 keeps each HTTP/2 setting as a ``collections.deque`` of its values (the current one first,
then those sent or received and not acknowledged yet), and hpack each dynamic table as a
deque of fields. A deque allocates a block of 64 slots up front: about 760 bytes for what is
nearly always one value, some 16 of them per connection (the local and the remote settings)
plus the HPACK tables, more than a third of what an idle HTTP/2 connection holds. The
classes here keep the same values in lists, with the deque methods h2 and hpack call
(``popleft`` for a setting's values, ``appendleft`` for a table's fields). Each list stays
short, so moving its items costs less than a deque's block: a setting holds its current value
and those not acknowledged yet (h2 acknowledges a client's settings as they arrive), and the
decoder's table is bounded by the server's own SETTINGS_HEADER_TABLE_SIZE (h2's default,
4,096 bytes: at most 128 fields). The encoder's table keeps its deque: the client's setting
sizes it.

``CompactSettings`` is h2's ``Settings`` storing lists; ``compact_table`` gives an empty
HPACK table a list. ``FrameDispatch`` stands for h2's frame dispatch table, a dict of a dozen
methods bound to the connection (1.4 KiB each), and binds the one a frame needs when it
arrives. What they hold and answer is h2's and hpack's own: only the container
type differs (``tests/protocol/test_http2_compact.py`` holds them to h2's and hpack's).
"""

from __future__ import annotations

from typing import Any, ClassVar

import h2.connection
import h2.settings
from hpack.table import HeaderTable

__all__ = ["CompactSettings", "FrameDispatch", "compact_table"]


class _Values(list[Any]):
    """One setting's values, the current one first (h2 reads ``[0]``, ``len``, ``append``
    and ``popleft``)."""

    __slots__ = ()

    def popleft(self) -> Any:
        return self.pop(0)


class _Fields(list[tuple[bytes, bytes]]):
    """An HPACK dynamic table's fields, the newest first (hpack indexes it, iterates it,
    ``appendleft``, ``pop`` and ``clear``)."""

    __slots__ = ()

    def appendleft(self, field: tuple[bytes, bytes]) -> None:
        self.insert(0, field)


class CompactSettings(h2.settings.Settings):
    """h2's ``Settings`` with each setting's values in a list, not a deque."""

    def __init__(self, client: bool = True, initial_values: dict[Any, int] | None = None) -> None:
        super().__init__(client, initial_values)
        # (h2 types its storage as deques: a list with their methods stands in)
        compact = {code: _Values(values) for code, values in self._settings.items()}
        self._settings = compact  # type: ignore[assignment]

    def __setitem__(self, key: Any, value: int) -> None:
        if key not in self._settings:  # (h2 would make a deque; ``[None]`` reads as unset)
            super().__setitem__(key, value)  # validates first
            self._settings[key] = _Values(self._settings[key])  # type: ignore[assignment]
            return
        super().__setitem__(key, value)


def compact_table(table: HeaderTable) -> None:
    """Keep the (still empty) dynamic ``table``'s fields in a list."""
    assert not table.dynamic_entries, "only an empty table is made compact"
    table.dynamic_entries = _Fields()  # type: ignore[assignment]


class FrameDispatch:
    """What h2's connection looks a received frame's method up in (``table[type(frame)]``),
    for ``connection``: the method h2's own table names for that frame type, bound when
    asked for. An unknown type is a ``KeyError``, as in h2's dict."""

    __slots__ = ("_connection",)

    #: frame type -> the name of the method h2 receives it with (read from h2's own table)
    _names: ClassVar[dict[type, str]] = {}

    def __init__(self, connection: h2.connection.H2Connection) -> None:
        if not FrameDispatch._names:
            table = connection._frame_dispatch_table
            FrameDispatch._names = {kind: method.__name__ for kind, method in table.items()}
        self._connection = connection

    def __getitem__(self, frame_type: type) -> Any:
        return getattr(self._connection, self._names[frame_type])
