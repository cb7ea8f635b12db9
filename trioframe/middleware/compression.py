"""``CompressionMiddleware``: gzip response bodies the client accepts."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

from .._body import EventStream
from .._errors import ConfigurationError
from .._http.media import essence_bytes
from .._response import Response
from ._headers import add_vary, request_header

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request

__all__ = ["CompressionMiddleware", "accepts_gzip"]

_GZIP_WBITS = 31  # zlib's gzip container
_TYPES = frozenset(
    (b"application/json", b"application/javascript", b"application/xml", b"image/svg+xml")
)
_SKIP_STATUSES = frozenset((204, 206, 304))
_CACHE_SIZE = 64


def accepts_gzip(accept_encoding: bytes) -> bool:
    """Whether an ``Accept-Encoding`` value allows gzip: its own q-value when listed, else the
    q-value of ``*``; ``q=0`` refuses, an unparsable q-value counts as ``0``, and a value that
    names neither (``identity``, empty) refuses."""
    gzip_q: float | None = None
    star_q: float | None = None
    for item in accept_encoding.split(b","):
        coding, _, params = item.partition(b";")
        coding = coding.strip().lower()
        if coding != b"gzip" and coding != b"*":
            continue
        q = 1.0
        for param in params.split(b";"):
            key, _, value = param.partition(b"=")
            if key.strip().lower() == b"q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
                if not 0.0 <= q <= 1.0:
                    q = 0.0
        if coding == b"gzip":
            gzip_q = q
        else:
            star_q = q
    chosen = gzip_q if gzip_q is not None else star_q
    return chosen is not None and chosen > 0.0


def _compressible(content_type: bytes) -> bool:
    media = essence_bytes(content_type)
    return (
        media.startswith(b"text/")
        or media in _TYPES
        or media.endswith(b"+json")
        or media.endswith(b"+xml")
    )


class CompressionMiddleware:
    """gzip response bodies when the request's ``Accept-Encoding`` allows it.

    A response is eligible when its status may carry a body (not 1xx, 204, 206 or 304), its
    ``Content-Type`` is text (``text/*``, ``application/json``, ``application/javascript``,
    ``application/xml``, ``image/svg+xml``, ``*+json``, ``*+xml``), it has no
    ``Content-Encoding``, no ``Content-Range`` and no ``Cache-Control: no-transform``, and
    its body is at least ``minimum_size`` bytes (streamed bodies always qualify). An eligible
    response gets ``Vary: Accept-Encoding`` (added to existing values) whether or not this
    client accepts gzip. It is compressed (at zlib ``level``, 1-9) when ``Accept-Encoding``
    allows gzip (see :func:`accepts_gzip`; no ``Accept-Encoding`` at all means no
    compression): a new ``Response`` carries ``Content-Encoding: gzip``, the compressed body
    (the server recomputes ``Content-Length``; an explicit one is dropped) and a strong
    ``ETag`` made weak. ``HEAD`` responses are compressed the same way, so their headers match
    ``GET``'s.

    A streamed body is compressed chunk by chunk, each flushed (``Z_SYNC_FLUSH``) so every
    chunk reaches the client when produced (server-sent events keep working).

    Cancellation: holds nothing across ``await next(request)``. Closing the compressed stream
    (client gone, cancellation) closes the handler's stream too.
    """

    __slots__ = ("_cache", "level", "minimum_size")

    def __init__(self, minimum_size: int = 1024, *, level: int = 6) -> None:
        if isinstance(minimum_size, bool) or not isinstance(minimum_size, int) or minimum_size < 0:
            raise ConfigurationError(f"minimum_size must be an int >= 0, not {minimum_size!r}")
        if isinstance(level, bool) or level not in range(1, 10):
            raise ConfigurationError(f"level must be 1 to 9, not {level!r}")
        self.minimum_size = minimum_size
        self.level = level
        self._cache: dict[bytes, bool] = {}

    def _accepts(self, request: Request) -> bool:
        value = request_header(request, b"accept-encoding")
        if value is None:
            return False
        cached = self._cache.get(value)
        if cached is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            cached = self._cache[value] = accepts_gzip(value)
        return cached

    async def __call__(self, request: Request, next: Next) -> Response:
        response = await next(request)
        if response.status < 200 or response.status in _SKIP_STATUSES:
            return response
        eligible = False
        for key, value in response.headers:
            if key == b"content-type":
                eligible = _compressible(value)
            elif key in (b"content-encoding", b"content-range") or (
                key == b"cache-control" and b"no-transform" in value.lower()
            ):
                return response
        if not eligible or (
            response.body_stream is None and len(response.body) < self.minimum_size
        ):
            return response
        add_vary(response, b"Accept-Encoding")
        if not self._accepts(request):
            return response
        headers = [(k, v) for k, v in response.headers if k != b"content-length"]
        for index, (key, value) in enumerate(headers):
            if key == b"etag" and not value.startswith(b"W/"):
                headers[index] = (key, b"W/" + value)
        headers.append((b"content-encoding", b"gzip"))
        if response.body_stream is None:
            body = zlib.compress(response.body, self.level, wbits=_GZIP_WBITS)
            return Response(response.status, body, headers)
        compressed = Response(response.status, b"", headers)
        gzipped = GzipStream(response.body_stream, self.level)
        events = type(response.body_stream) is EventStream  # still one: the same kind
        compressed.body_stream = EventStream(gzipped, gzipped.finish) if events else gzipped
        return compressed


class GzipStream:
    """An async iterator of gzip data for the ``bytes`` chunks of ``source``: each non-empty
    chunk yields its compressed bytes flushed with ``Z_SYNC_FLUSH``, and the end yields the
    gzip trailer.

    Cancellation: a cancelled ``__anext__`` leaves the stream usable (nothing was consumed);
    ``aclose`` closes ``source`` (its iterator's ``aclose``, when it has one), even if
    iteration never started."""

    __slots__ = ("_compressor", "_done", "_iterator", "_source")

    def __init__(self, source: AsyncIterable[bytes], level: int = 6) -> None:
        self._source = source
        self._iterator: AsyncIterator[bytes] | None = None
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
        self._done = False

    def __aiter__(self) -> GzipStream:
        return self

    async def __anext__(self) -> bytes:
        if self._done:
            raise StopAsyncIteration
        if self._iterator is None:
            self._iterator = aiter(self._source)
        while True:
            try:
                chunk = await anext(self._iterator)
            except StopAsyncIteration:
                self._done = True
                return self._compressor.flush(zlib.Z_FINISH)
            if chunk:
                compressor = self._compressor
                return compressor.compress(chunk) + compressor.flush(zlib.Z_SYNC_FLUSH)

    def finish(self) -> bytes:
        """The gzip trailer, when the stream stops before its source has ended (an event
        stream at shutdown); ``b""`` once the trailer was given."""
        if self._done:
            return b""
        self._done = True
        return self._compressor.flush(zlib.Z_FINISH)

    async def aclose(self) -> None:
        """Stop, and close the source."""
        self._done = True
        target: object = self._iterator if self._iterator is not None else self._source
        aclose = getattr(target, "aclose", None)
        if aclose is not None:
            await aclose()
