"""Resolving a file response (its body a ``FileSource``) against its request: open the file in
a worker thread, apply the preconditions and ``Range``, and make the final response with a
``FileBody``."""

from __future__ import annotations

import mimetypes
import os
import secrets
import stat
from pathlib import PurePath

import trio

from .._body import FileSource, Located
from .._errors import Error
from .._request import Request
from .._response import Response
from .body import FileBody, Piece
from .conditions import Validators, evaluate, range_applies
from .disposition import content_disposition
from .ranges import UNSATISFIABLE, parse_range

__all__ = ["media_type_for", "open_regular_file", "resolve_file"]

_TEXT_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")


async def resolve_file(response: Response, request: Request) -> Response:
    """The final response to ``request`` for ``response``, whose body is a ``FileSource``:
    the whole file (200), a range (206), a
    precondition's answer (304, 412), an unsatisfiable range (416), or the standard error
    for a file that cannot be served (404 missing or not a regular file, 403 not readable).
    Headers set on ``response`` are kept. The file system is used in a worker thread only."""
    source = response.body_stream
    assert type(source) is FileSource
    try:
        fd, info, coding, name = await trio.to_thread.run_sync(_open, source)
    except PermissionError:
        return Response.from_error(Error.forbidden("the file is not readable"))
    except OSError:
        return Response.from_error(Error.not_found("file"))
    try:
        answer = _answer(response, source, request, fd, info, name)
    except BaseException:
        os.close(fd)
        raise
    if type(answer.body_stream) is not FileBody:  # 304, 412, 416: the file is not sent
        os.close(fd)  # (closed here only: a descriptor closed twice may be another's by then)
    if coding is not None and answer.status in (200, 206):
        answer.headers.append((b"content-encoding", coding.encode()))
    return answer


def _open(source: FileSource) -> Located:
    """In a worker thread: open the file (``Router.static``: locate it)."""
    if source.locate is not None:
        return source.locate()
    fd, info = open_regular_file(source.path)
    return fd, info, None, source.filename or PurePath(source.path).name


def _answer(
    response: Response,
    source: FileSource,
    request: Request,
    fd: int,
    info: os.stat_result,
    name: str,
) -> Response:
    """The answer for the open file ``fd``; the caller closes ``fd`` unless the answer's body
    is the ``FileBody`` that now owns it."""
    size = info.st_size
    validators = Validators(size, info.st_mtime_ns)
    method = str(request.method)
    precondition = evaluate(method, request.headers, validators)
    kept = [*response.headers]
    tags = [
        (b"etag", validators.etag.encode()),
        (b"last-modified", validators.last_modified.encode()),
    ]
    if precondition is not None:
        if precondition == 304:
            return Response(304, b"", [*tags, *kept])
        return Response.from_error(Error(412, "a precondition of the request failed"))
    media_type = source.content_type or media_type_for(name)
    headers = [
        (b"content-type", media_type.encode("latin-1")),
        (b"accept-ranges", b"bytes"),
        *tags,
    ]
    disposition = content_disposition(
        source.filename or (name if source.download else None), download=source.download
    )
    if disposition is not None:
        headers.append((b"content-disposition", disposition.encode("latin-1")))
    wanted = None
    if method == "GET" and range_applies(request.headers, validators):
        wanted = parse_range(request.headers.get("range"), size)
    if wanted is UNSATISFIABLE:
        error = Error(
            416, "the range is not satisfiable", headers={"content-range": f"bytes */{size}"}
        )
        return Response.from_error(error)
    status = 200
    pieces: list[Piece] = [(0, size)] if size else []
    if isinstance(wanted, list) and len(wanted) == 1:
        (first, last), status = wanted[0], 206
        headers.append((b"content-range", b"bytes %d-%d/%d" % (first, last, size)))
        pieces = [(first, last - first + 1)]
    elif isinstance(wanted, list):
        status = 206
        boundary = secrets.token_hex(16)
        headers[0] = (b"content-type", b"multipart/byteranges; boundary=" + boundary.encode())
        pieces = _byteranges(wanted, size, boundary, media_type)
    length = sum(len(piece) if isinstance(piece, bytes) else piece[1] for piece in pieces)
    headers.append((b"content-length", b"%d" % length))
    answer = Response(status, b"", [*headers, *kept])
    answer.body_stream = FileBody(fd, pieces)
    return answer


def _byteranges(
    ranges: list[tuple[int, int]], size: int, boundary: str, media_type: str
) -> list[Piece]:
    """The pieces of a ``multipart/byteranges`` body (RFC 9110 14.6): each part's delimiter
    and headers, its span of the file, then the closing delimiter, lines ended by CRLF."""
    pieces: list[Piece] = []
    for index, (first, last) in enumerate(ranges):
        delimiter = "--" if index == 0 else "\r\n--"  # a part's data ends before the CRLF
        head = (
            f"{delimiter}{boundary}\r\n"
            f"content-type: {media_type}\r\n"
            f"content-range: bytes {first}-{last}/{size}\r\n\r\n"
        )
        pieces += [head.encode("latin-1"), (first, last - first + 1)]
    pieces.append(f"\r\n--{boundary}--\r\n".encode())
    return pieces


def open_regular_file(path: str) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading: its descriptor and status. ``FileNotFoundError`` for
    anything but a regular file (a directory, a device, a FIFO), which is never opened for
    long: a FIFO is opened without blocking and closed."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileNotFoundError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def media_type_for(name: str) -> str:
    """The ``Content-Type`` for a file called ``name`` (text types in UTF-8), guessed from
    its extension; ``application/octet-stream`` when unknown."""
    media_type = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
    if media_type.startswith(_TEXT_TYPES):
        media_type += "; charset=utf-8"
    return media_type
