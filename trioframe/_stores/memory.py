"""``MemoryStore``: state kept in this process."""

from __future__ import annotations

__all__ = ["MemoryStore"]


class MemoryStore:
    """State kept in this process: nothing to install or run, shared by nothing else (with
    ``workers > 1`` each worker has its own)."""

    __slots__ = ()
