"""``StaticFiles``: the handler behind ``Router.static``, serving the files of a directory.

Only regular files inside the directory are served; everything else is 404, decided before
the file system is touched where the path alone tells (an encoded ``/`` or ``\\``, a NUL, a
``..`` or ``.`` segment, an empty segment, a dotfile or dot-directory) and after resolving
symlinks otherwise (a path whose real location is outside the directory, unless
``follow_symlinks``). The handler itself does no I/O: the file is located, in a worker
thread, when the response is resolved (``resolve.resolve_file``). A directory serves its
``index`` file. With ``precompressed``, a ``.br`` or ``.gz`` sibling of the file is served
instead when the client accepts that coding (``Content-Encoding``, the original's type, and
``Vary: Accept-Encoding`` on every file). Every file gets ``X-Content-Type-Options: nosniff``
and, when given, ``Cache-Control``.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import PurePath

from .._errors import ConfigurationError, Error
from .._request import Request
from .._response import Response
from .response import FileResponse, Located

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
        response = FileResponse(self.root, locate=partial(self._locate, segments, accepted))
        response.with_header("x-content-type-options", "nosniff")
        if self.precompressed:
            response.with_header("vary", "Accept-Encoding")
        if self.cache_control is not None:
            response.with_header("cache-control", self.cache_control)
        return response

    def _locate(self, segments: list[str], accepted: frozenset[str]) -> Located:
        """(path to send, its content coding, the name its type comes from), or ``None``.
        Called in a worker thread when the response is resolved."""
        path = os.path.join(self.root, *segments)
        if not self._inside(path):
            return None
        if os.path.isdir(path):
            if self.index is None:
                return None
            path = os.path.join(path, self.index)
            if not self._inside(path):
                return None
        if not os.path.isfile(path):
            return None
        name = PurePath(path).name
        if self.precompressed:
            for coding, suffix in _SIBLINGS:
                sibling = path + suffix
                if coding in accepted and self._inside(sibling) and os.path.isfile(sibling):
                    return sibling, coding, name
        return path, None, name

    def _inside(self, path: str) -> bool:
        """Whether ``path`` may be served: its real location is inside the root (always true
        with ``follow_symlinks``, ``..`` having been refused before)."""
        if self.follow_symlinks:
            return True
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root + os.sep)


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
