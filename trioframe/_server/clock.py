"""The ``Date`` header value, formatted at most once a second."""

from __future__ import annotations

import time
from email.utils import formatdate

__all__ = ["http_date"]

_cache: tuple[int, bytes] = (0, b"")


def http_date() -> bytes:
    """The current time as an IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``)."""
    global _cache
    now = int(time.time())
    if _cache[0] != now:
        _cache = (now, formatdate(now, usegmt=True).encode("ascii"))
    return _cache[1]
