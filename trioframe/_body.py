"""The kinds of response body beyond ``bytes`` and a plain stream, which the server tells
apart by the type of ``Response.body_stream`` (never by the response's class or its
``Content-Type``):

* ``None``: the body is ``Response.body``, bytes;
* ``FileSource``: a file (``Response.file``, ``Router.static``) not yet opened. The app
  resolves it as soon as the handler returns (``_files.resolve``: the file opened in a worker
  thread, the request's preconditions and ``Range`` applied), so middleware sees the final
  status and headers; the server resolves one that a middleware made itself. Resolved, it is a
  ``_files.body.FileBody``, which the server may send with ``os.sendfile``;
* ``EventStream``: ``text/event-stream`` frames (``Response.sse``, or ``Response.stream`` with
  that media type), which end cleanly when graceful shutdown begins;
* ``Upgrade``: a ``101 Switching Protocols`` whose connection becomes a WebSocket session run
  by the handler bound in it;
* any other async iterable of ``bytes``: a stream, sent as it comes.

Nothing here does I/O.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

import attrs

__all__ = ["EventStream", "FileSource", "Located", "Upgrade"]

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


class EventStream:
    """``text/event-stream`` frames from ``source``, iterated as any stream is; what tells
    the server to end it when graceful shutdown begins. ``finish``, when given, returns the
    bytes that close the body once it stops early (a wrapper's framing: compression's gzip
    trailer), ``b""`` when there is nothing left to close."""

    __slots__ = ("_finish", "_iterator", "source")

    def __init__(
        self, source: AsyncIterable[bytes], finish: Callable[[], bytes] | None = None
    ) -> None:
        self.source = source
        self._finish = finish
        self._iterator: AsyncIterator[bytes] | None = None

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> bytes:
        if self._iterator is None:
            self._iterator = aiter(self.source)
        return await anext(self._iterator)

    def finish(self) -> bytes:
        """The bytes that end the body now (after its last event, or at shutdown)."""
        return b"" if self._finish is None else self._finish()

    async def aclose(self) -> None:
        """Close the source (an async generator's ``finally`` runs now)."""
        close = getattr(self._iterator or self.source, "aclose", None)
        if close is not None:
            await close()


@attrs.frozen
class Upgrade:
    """The body of an accepted WebSocket upgrade (a 101): once the server has switched
    protocols it runs ``run(connection)``, the handler with its extracted arguments bound.
    ``subprotocol`` is the one agreed on, ``extensions`` the wsproto extension objects
    (permessage-deflate or none). Iterating it is a bug: there is no HTTP body."""

    run: Callable[[Any], Awaitable[Any]]
    subprotocol: str | None
    extensions: list[Any]

    def __aiter__(self) -> Upgrade:
        return self

    async def __anext__(self) -> bytes:
        raise RuntimeError("an upgrade has no body to send")
