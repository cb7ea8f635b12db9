"""``StaticFiles``: the handler behind ``Router.static``, serving the files of a directory.

Only regular files inside the directory are served; everything else is 404, decided before
the file system is touched where the path alone tells (an encoded ``/`` or ``\\``, a NUL, a
``..`` or ``.`` segment, an empty segment, a dotfile or dot-directory) and while opening the
file otherwise: it is opened beneath the directory one component at a time, each symlink
resolved without leaving it (``beneath.open_beneath``: one out of it is 404 unless
``follow_symlinks``), and the descriptor checked is the one sent. The handler itself does no
I/O: the file is located and opened, in a worker thread, when the response is resolved
(``resolve.resolve_file``). A directory serves its ``index`` file. With ``precompressed``, a
``.br`` or ``.gz`` sibling of the file is served instead when the client accepts that coding
(``Content-Encoding``, the original's type, and ``Vary: Accept-Encoding`` on every file).
Every file gets ``X-Content-Type-Options: nosniff`` and, when given, ``Cache-Control``.
"""

from __future__ import annotations

import os
import stat
from functools import partial

from .._body import FileSource, Located
from .._errors import ConfigurationError, Error
from .._request import Request
from .._response import Response
from .beneath import open_beneath

__all__ = ["StaticFiles"]

_ENCODED_FORBIDDEN = ("%2f", "%5c", "%00")  # an encoded /, \ or NUL in the raw path
_SIBLINGS = (("br", ".br"), ("gzip", ".gz"))  # preferred first


class StaticFiles:
    """Serves ``directory`` (see the module docstring). ``ConfigurationError`` when it is
    not a directory."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        index: str | None = "index.html",
        follow_symlinks: bool = False,
        precompressed: bool = True,
        cache_control: str | None = None,
    ) -> None:
        root = os.path.realpath(directory)
        if not os.path.isdir(root):
            raise ConfigurationError(
                f"static directory {os.fspath(directory)!r} is not a directory"
            )
        self.root = root
        self.index = index
        self.follow_symlinks = follow_symlinks
        self.precompressed = precompressed
        self.cache_control = cache_control

    async def serve(self, request: Request) -> Response:
        """The file the request's ``path`` parameter names (the directory itself without
        one). Raises ``NotFound`` for anything that is not to be served."""
        rest = request.params.get("path", "")
        if any(code in request.uri.raw_path.lower() for code in _ENCODED_FORBIDDEN):
            raise Error.not_found("file")
        segments = rest.split("/")
        if segments[-1] == "":  # a trailing slash: the directory's index
            segments.pop()
        for segment in segments:
            if not segment or segment.startswith(".") or "\\" in segment or "\x00" in segment:
                raise Error.not_found("file")
        accepted = _accepted_codings(request.headers.get("accept-encoding"))
        # (the path is only a placeholder: ``locate`` chooses the file at resolution time)
        response = Response(200)
        response.body_stream = FileSource(
            self.root, locate=partial(self._locate, segments, accepted)
        )
        response.with_header("x-content-type-options", "nosniff")
        if self.precompressed:
            response.with_header("vary", "Accept-Encoding")
        if self.cache_control is not None:
            response.with_header("cache-control", self.cache_control)
        return response

    def _locate(self, segments: list[str], accepted: frozenset[str]) -> Located:
        """The file to send, open (see ``Located``). Called in a worker thread when the
        response is resolved. ``OSError`` when there is none to send (``PermissionError``
        when it may not be read). Each file is opened beneath the root and checked on its
        descriptor, which is the one sent."""
        parts = segments
        fd, info = self._open(parts)
        if stat.S_ISDIR(info.st_mode):
            os.close(fd)
            if self.index is None:
                raise FileNotFoundError("a directory, and no index to serve")
            parts = [*parts, *self.index.split("/")]
            fd, info = self._open(parts)
            if stat.S_ISDIR(info.st_mode):
                os.close(fd)
                raise FileNotFoundError("the index is a directory")
        name = parts[-1]
        if not self.precompressed:
            return fd, info, None, name
        try:
            for coding, suffix in _SIBLINGS:
                sibling = self._open_sibling([*parts[:-1], name + suffix], coding, accepted)
                if sibling is not None:
                    os.close(fd)
                    return *sibling, coding, name
        except BaseException:
            os.close(fd)
            raise
        return fd, info, None, name

    def _open_sibling(
        self, parts: list[str], coding: str, accepted: frozenset[str]
    ) -> tuple[int, os.stat_result] | None:
        """The precompressed sibling ``parts`` when the client accepts its ``coding`` and it
        is a regular file that can be read, open; else ``None``."""
        if coding not in accepted:
            return None
        try:
            fd, info = self._open(parts)
        except OSError:
            return None
        if stat.S_ISREG(info.st_mode):
            return fd, info
        os.close(fd)
        return None

    def _open(self, parts: list[str]) -> tuple[int, os.stat_result]:
        """The regular file or directory ``parts`` names beneath the root, open (a file ready
        for blocking reads), and its status. ``OSError`` for anything else: missing, out of
        the root, another kind of file (a FIFO is never waited for), not readable."""
        fd = open_beneath(self.root, parts, follow_links=self.follow_symlinks)
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode):
                os.set_blocking(fd, True)
            elif not stat.S_ISDIR(info.st_mode):
                raise FileNotFoundError("not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return fd, info


def _accepted_codings(value: str | None) -> frozenset[str]:
    """The content codings an ``Accept-Encoding`` value accepts (``q`` above 0; ``*`` stands
    for br and gzip)."""
    if not value:
        return frozenset()
    accepted: set[str] = set()
    for element in value.split(","):
        coding, _, params = element.partition(";")
        coding = coding.strip(" \t").lower()
        quality = 1.0
        for param in params.split(";"):
            key, _, number = param.partition("=")
            if key.strip(" \t").lower() == "q":
                try:
                    quality = float(number)
                except ValueError:
                    quality = 0.0
        if quality <= 0:
            continue
        if coding == "*":
            accepted.update(("br", "gzip"))
        elif coding in ("br", "gzip", "x-gzip"):
            accepted.add("gzip" if coding == "x-gzip" else coding)
    return frozenset(accepted)
