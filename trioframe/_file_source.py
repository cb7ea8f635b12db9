"""``FileSource``: the body of a ``Response.file`` (or ``Router.static``) response before it
meets its request.

A response whose ``body_stream`` is a ``FileSource`` is a file response: the app resolves it
as soon as the handler returns (``_files.resolve``: the file opened in a worker thread, the
request's preconditions and ``Range`` applied), so middleware sees the final status and
headers; the server resolves one that a middleware made itself. Nothing here does I/O.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

__all__ = ["FileSource", "Located"]

#: What a locator finds, in a worker thread: (the descriptor of the regular file to send,
#: open for blocking reads and the caller's to close, its status, its content coding or
#: ``None``, the name its type is guessed from). A locator raises ``OSError`` when there is
#: nothing to send (``PermissionError``: 403; any other: 404).
Located = tuple[int, os.stat_result, str | None, str]


@attrs.frozen
class FileSource:
    """The file at ``path`` (see ``Response.file``); ``locate``, when given, is called in a
    worker thread to choose and open the file instead (``Router.static``). Iterating it is a
    bug: it is resolved before it is sent."""

    path: str
    filename: str | None = None
    content_type: str | None = None
    download: bool = False
    locate: Callable[[], Located] | None = None

    def __aiter__(self) -> FileSource:
        return self

    async def __anext__(self) -> bytes:
        raise RuntimeError("a file response was sent without being resolved")
