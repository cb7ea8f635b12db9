"""``Response`` and its builders, ``ServerSentEvent``, and handler return conversion.

Application layer: nothing here touches sockets. A response body is either ``bytes`` or an
async iterable of chunks that the server streams with backpressure.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

import attrs

from ._body import EventStream, FileSource
from ._codec import pydantic_models
from ._codec.encode import encode_json, encode_record
from ._errors import Error, error_body
from ._http.cookies import Cookie
from ._http.grammar import FIELD_CONTROL, TOKEN
from ._http.media import essence

__all__ = ["Response", "ServerSentEvent", "to_response"]

#: Headers the server owns: it decides the framing of every response.
_SERVER_OWNED = frozenset({"transfer-encoding"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # every line break an event-stream parser knows

CT_TEXT = b"text/plain; charset=utf-8"
CT_HTML = b"text/html; charset=utf-8"
CT_JSON = b"application/json"
CT_OCTETS = b"application/octet-stream"
CT_SSE = b"text/event-stream"


_CHECKED: dict[tuple[str, str], tuple[bytes, bytes]] = {}
_MAX_CHECKED = 1024  # the cache starts over when full (per-response values pass through it)


def _check_header(name: str, value: str) -> tuple[bytes, bytes]:
    """``(name, value)`` validated and encoded; most handlers set the same few fields on every
    response, so a field that passed is remembered (two pattern matches saved)."""
    checked = _CHECKED.get((name, value))
    if checked is None:
        checked = _validate_header(name, value)
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[name, value] = checked
    return checked


def _validate_header(name: str, value: str) -> tuple[bytes, bytes]:
    if not TOKEN.fullmatch(name):
        raise ValueError(f"invalid header name {name!r}")
    if name.lower() in _SERVER_OWNED:
        raise ValueError(f"{name} is set by the server (it frames every response)")
    # A field value is visible characters, SP, HTAB and obs-text: refusing every other control
    # character (CR, LF and NUL among them) means no value can split a response or be refused
    # later by the protocol layer.
    if FIELD_CONTROL.search(value):
        raise ValueError(
            f"header {name!r} value contains a control character (only HTAB is allowed)"
        )
    try:
        return name.lower().encode("ascii"), value.strip(" \t").encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"header {name!r} value is not ISO-8859-1 text") from None


def _check_status(status: int) -> int:
    code = int(status)
    if not 100 <= code <= 599:
        raise ValueError(f"{status!r} is not an HTTP status (100-599)")
    return code


class Response:
    """An HTTP response. Build it with a constructor and chain modifiers::

        Response.json({"id": 1}).with_status(StatusCode.CREATED).with_header("x-a", "b")

    ``Response(status)`` is an empty body with that status, exactly as built.
    """

    __slots__ = ("body", "body_stream", "headers", "status")

    def __init__(
        self,
        status: int = 200,
        body: bytes = b"",
        headers: Iterable[tuple[bytes, bytes]] = (),
    ) -> None:
        # (the common status inline: a call less on every response)
        self.status = (
            status if type(status) is int and 100 <= status <= 599 else _check_status(status)
        )
        self.body = body
        #: ``(name, value)`` byte pairs, names lower-case; Content-Length is added when sent.
        self.headers: list[tuple[bytes, bytes]] = list(headers)
        #: A streamed body (async iterable of ``bytes``), or ``None`` for ``body``.
        self.body_stream: AsyncIterable[bytes] | None = None

    def __repr__(self) -> str:
        kind = "stream" if self.body_stream is not None else f"{len(self.body)} bytes"
        return f"<Response {self.status} {kind}>"

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def new(cls, status: int = 200) -> Response:
        """An empty response with ``status`` (same as ``Response(status)``)."""
        return cls(status)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        """``text/plain; charset=utf-8``."""
        return cls(status, text.encode(), [(b"content-type", CT_TEXT)])

    @classmethod
    def html(cls, html: str, status: int = 200) -> Response:
        """``text/html; charset=utf-8``."""
        return cls(status, html.encode(), [(b"content-type", CT_HTML)])

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Response:
        """``application/json``. attrs instances, dataclasses, ``Headers`` and ``CookieJar``
        serialize; an unserializable value raises ``InternalServerError`` (500, details
        logged, not sent) here, at the call."""
        return cls(status, encode_json(value), [(b"content-type", CT_JSON)])

    @classmethod
    def file(
        cls,
        path: str | os.PathLike[str],
        *,
        filename: str | None = None,
        content_type: str | None = None,
        download: bool = False,
    ) -> Response:
        """The file at ``path``, answered as the request asks: the whole file (200), a range
        or several (206, ``multipart/byteranges``), 304/412 for conditional requests, 416 for
        a range outside the file; ``ETag``, ``Last-Modified``, ``Accept-Ranges`` always.
        ``content_type`` defaults to a guess from the name; ``filename`` or ``download``
        add ``Content-Disposition`` (``attachment`` when ``download``). A missing file, or
        anything but a regular file, is 404; an unreadable one 403.

        No I/O happens here: the file is opened (in a worker thread) once the handler
        returns. The body is sent in chunks with backpressure, or with ``os.sendfile`` on
        plain HTTP/1.1; a client that goes away stops it and the file is closed at once."""
        response = cls(200)
        response.body_stream = FileSource(os.fspath(path), filename, content_type, download)
        return response

    @classmethod
    def validation_error(cls, messages: Iterable[str]) -> Response:
        """422 with the standard error body; ``errors`` lists the messages."""
        return cls.from_error(Error.validation(messages))

    @classmethod
    def redirect(cls, url: str, status: int = 302) -> Response:
        """A redirect to ``url`` (``Location``); ``status`` is 301, 302, 303, 307 or 308."""
        if status not in (301, 302, 303, 307, 308):
            raise ValueError(f"{status} is not a redirect status")
        return cls(status).with_header("location", url)

    @classmethod
    def stream(
        cls, chunks: AsyncIterable[bytes | str], content_type: str = "application/octet-stream"
    ) -> Response:
        """A chunked body: each ``bytes`` or ``str`` (UTF-8) item is sent as it is produced.

        The server pulls the next item only after the previous one was handed to the
        client's socket (backpressure). If the client goes away, iteration is cancelled
        and the iterator's ``aclose`` runs."""
        response = cls(200, b"", [(b"content-type", content_type.encode("latin-1"))])
        body = _as_bytes(chunks)
        event_stream = essence(content_type) == "text/event-stream"
        response.body_stream = EventStream(body) if event_stream else body
        return response

    @classmethod
    def sse(cls, events: AsyncIterable[str | ServerSentEvent]) -> Response:
        """``text/event-stream``: each ``str`` is sent as ``data:`` lines, each
        ``ServerSentEvent`` with its fields.

        The stream ends cleanly when graceful shutdown begins: the wait for the next event is
        cancelled (the iterator is closed), the body is terminated properly and the connection
        closes, so an EventSource client reconnects (to another instance) without an error.
        ``Response.stream(..., content_type="text/event-stream")`` is treated the same;
        other streams keep going until ``shutdown_timeout``."""
        response = cls(
            200,
            b"",
            [
                (b"content-type", CT_SSE),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
            ],
        )
        response.body_stream = EventStream(_sse_frames(events))
        return response

    @classmethod
    def from_error(cls, error: Error) -> Response:
        """The standard error response for ``error`` (its headers included)."""
        response = cls(error.status, error.body(), [(b"content-type", CT_JSON)])
        for name, value in error.headers.items():
            response.with_header(name, value)
        return response

    @classmethod
    def error(cls, status: int, message: str, errors: Iterable[str] | None = None) -> Response:
        """A standard error body response without raising."""
        return cls(status, error_body(status, message, errors), [(b"content-type", CT_JSON)])

    # -- modifiers --------------------------------------------------------------------------
    def with_status(self, status: int) -> Response:
        """Set the status; returns the response. ``ValueError`` outside 100-599."""
        self.status = _check_status(status)
        return self

    def with_body(self, body: str | bytes) -> Response:
        """Set the body (``str`` is UTF-8 encoded); returns the response."""
        if type(body) is not bytes:  # (bytes as they are: no call for the common case)
            body = body.encode() if isinstance(body, str) else bytes(body)
        self.body = body
        self.body_stream = None
        return self

    def with_header(self, name: str, value: str) -> Response:
        """Set header ``name`` (replacing earlier values); returns the response.

        Raises ``ValueError`` when the name is not a token, the value holds a control character
        other than HTAB (CR, LF, NUL, VT, FF, DEL, ...: RFC 9110 forbids them), or the header is
        ``Transfer-Encoding`` (the server frames responses itself)."""
        key, raw = _CHECKED.get((name, value)) or _check_header(name, value)
        if self.headers:
            self.headers = [(k, v) for k, v in self.headers if k != key]
        self.headers.append((key, raw))
        return self

    def append_header(self, name: str, value: str) -> Response:
        """Add a value for ``name`` next to existing ones; returns the response."""
        self.headers.append(_check_header(name, value))
        return self

    def add_cookie(self, cookie: Cookie) -> Response:
        """Add a ``Set-Cookie`` header for ``cookie`` (one header per cookie; earlier ones
        are kept); returns the response. ``ValueError`` from ``cookie.render()`` propagates."""
        self.headers.append((b"set-cookie", cookie.render().encode("ascii")))
        return self

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` on this response, or ``None``."""
        key = name.lower().encode("latin-1")
        for k, v in self.headers:
            if k == key:
                return v.decode("latin-1")
        return None


async def _as_bytes(chunks: AsyncIterable[bytes | str]) -> AsyncIterator[bytes]:
    iterator = aiter(chunks)
    try:
        async for chunk in iterator:
            yield chunk.encode() if isinstance(chunk, str) else bytes(chunk)
    finally:
        await _aclose(iterator)


async def _aclose(iterator: object) -> None:
    """Close the application's iterator too, so its ``finally`` blocks run now."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


@attrs.frozen
class ServerSentEvent:
    """One server-sent event: ``data`` (may span lines), optional ``event``, ``id`` and
    ``retry`` (milliseconds)."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None

    def encode(self) -> bytes:
        """The event in ``text/event-stream`` framing, ending with a blank line."""
        lines: list[str] = []
        for name, value in (("event", self.event), ("id", self.id)):
            if value is not None:
                if "\n" in value or "\r" in value:
                    raise ValueError(f"SSE {name} must be one line")
                lines.append(f"{name}: {value}")
        if self.retry is not None:
            lines.append(f"retry: {int(self.retry)}")
        lines.extend(f"data: {line}" for line in _LINE_BREAK.split(self.data))
        return ("\n".join(lines) + "\n\n").encode()


async def _sse_frames(events: AsyncIterable[str | ServerSentEvent]) -> AsyncIterator[bytes]:
    iterator = aiter(events)
    try:
        async for event in iterator:
            frame = event if isinstance(event, ServerSentEvent) else ServerSentEvent(event)
            yield frame.encode()
    finally:
        await _aclose(iterator)


def to_response(value: object, status: int = 200) -> Response:
    """Turn a handler's return value into a ``Response``, with ``status`` (the route's) unless
    the value is a ``Response`` already.

    ``Response`` as is; ``str`` → text/plain; ``bytes`` → application/octet-stream;
    ``dict``, ``list``, attrs instances, dataclasses and pydantic models → JSON; ``None`` → an
    empty body (none at all with 204). Anything else is a ``TypeError`` (the server answers 500
    and logs it)."""
    if isinstance(value, Response):
        return value
    if (body := encode_record(value)) is not None:
        return Response(status, body, [(b"content-type", CT_JSON)])
    if isinstance(value, str):
        return Response.text(value, status)
    if isinstance(value, bytes | bytearray | memoryview):
        return Response(status, bytes(value), [(b"content-type", CT_OCTETS)])
    if value is None:
        return Response(status)
    if isinstance(value, dict | list) or attrs.has(type(value)):
        return Response.json(value, status)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return Response.json(value, status)
    if pydantic_models.is_model(type(value)):
        return Response.json(value, status)
    raise TypeError(f"a handler returned {type(value).__name__}, which is not a response")
