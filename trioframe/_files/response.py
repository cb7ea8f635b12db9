"""``FileResponse``: what ``Response.file`` returns, before it meets the request.

``Response.file(path)`` does no I/O, and neither does this module (the router and the
response layer never wait): the file is opened, and the request's preconditions and
``Range`` applied, by ``resolve.resolve_file``, which the app calls as soon as the handler
returns (so middleware sees the final status and headers: 200, 206, 304, 412 or 416) and
the server calls for a file response a middleware made itself.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Callable

from .._response import Response

__all__ = ["FileResponse", "Located", "media_type_for"]

_TEXT_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")

#: What a locator finds, in a worker thread: (the descriptor of the regular file to send,
#: open for blocking reads and the caller's to close, its status, its content coding or
#: ``None``, the name its type is guessed from). A locator raises ``OSError`` when there is
#: nothing to send (``PermissionError``: 403; any other: 404).
Located = tuple[int, os.stat_result, str | None, str]


class _Unresolved:
    """The body of a file response before it is resolved: iterating it is a bug."""

    def __aiter__(self) -> _Unresolved:
        return self

    async def __anext__(self) -> bytes:
        raise RuntimeError("a file response was sent without being resolved")


class FileResponse(Response):
    """A response for the file at ``path`` (see ``Response.file``). ``locate``, when given,
    is called in a worker thread to choose and open the file instead (``Router.static``)."""

    __slots__ = ("content_type", "download", "filename", "locate", "path")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        filename: str | None = None,
        content_type: str | None = None,
        download: bool = False,
        locate: Callable[[], Located] | None = None,
    ) -> None:
        super().__init__(200)
        self.path = os.fspath(path)
        self.filename = filename
        self.content_type = content_type
        self.download = download
        self.locate = locate
        self.body_stream = _Unresolved()

    def __repr__(self) -> str:
        return f"<FileResponse {self.path!r}>"


def media_type_for(name: str) -> str:
    """The ``Content-Type`` for a file called ``name`` (text types in UTF-8), guessed from
    its extension; ``application/octet-stream`` when unknown."""
    media_type = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
    if media_type.startswith(_TEXT_TYPES):
        media_type += "; charset=utf-8"
    return media_type
