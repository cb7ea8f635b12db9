"""``ResponseWriter``: trioframe's own HTTP/1.1 response serializer and keep-alive verdict, for
the llhttp adapter (``http1_llhttp.py``).

It follows h11's rules for a server's responses exactly, so that both HTTP/1.1 paths put the
same response on the wire and keep or close the connection alike:

- every header field is validated (name a token, value without controls, leading or trailing
  whitespace; RFC 9110 section 5), once per distinct field: most responses repeat the same
  fields, so a validated field is remembered (the cache starts over when full);
- a final response has a status of 200 or more (``1xx`` go through their own methods);
- the body's framing (RFC 9112 section 6.3): none for HEAD, 204 and 304; else
  ``Transfer-Encoding: chunked`` wins over ``Content-Length``; a body without either is sent
  chunked to an HTTP/1.1 client, and to an HTTP/1.0 client as the bytes up to the close;
- the connection is kept only when the request and the response both allow it (no
  ``Connection: close`` on either, an HTTP/1.1 client: so a body sent up to the close only
  ever goes to a connection that closes); otherwise the head says ``Connection: close``;
- a body that overruns or falls short of its ``Content-Length`` is refused.

Each refusal is ``UnsendableResponse``, raised before the bytes concerned are returned; after
one, the writer is failed and the connection cannot carry another response.
"""

from __future__ import annotations

import re

from .._errors import reason_phrase
from .._http.grammar import TOKEN_BYTES
from .._http.headers import Header
from .errors import UnsendableResponse
from .finalize import body_allowed, final_headers
from .http1_base import comma_values

__all__ = ["ResponseWriter"]

_FIELD_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_MAX_LENGTH_DIGITS = 20

# What a validated field is, for the framing decisions: kept with the field in the cache.
_PLAIN, _LENGTH, _CODING, _CONNECTION = range(4)
_KINDS = {b"content-length": _LENGTH, b"transfer-encoding": _CODING, b"connection": _CONNECTION}
_FIELDS: dict[Header, int] = {}
_MAX_FIELDS = 1024

_STATUS_LINES: dict[int, bytes] = {}
#: The encoded status line and fields of whole responses (``ResponseWriter.whole``), by
#: ``(status, *fields)``: only statuses with a body and fields that frame nothing; the cache
#: starts over when full (a field whose value changes every response only ever misses).
_HEADS: dict[tuple[object, ...], bytes] = {}
_MAX_HEADS = 1024
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_LAST_CHUNK = b"0\r\n\r\n"
_NO_BODY = frozenset({204, 304})

# How the body is framed on the wire.
_BY_LENGTH, _CHUNKED, _UNTIL_CLOSE = range(3)


def _field_kind(field: Header) -> int:
    """Validate ``field`` (cached) and say which framing header it is, if any."""
    kind = _FIELDS.get(field)
    if kind is None:
        name, value = field
        if TOKEN_BYTES.fullmatch(name) is None:
            raise UnsendableResponse(f"illegal header name {name!r}")
        if _FIELD_VALUE.fullmatch(value) is None:
            raise UnsendableResponse(f"illegal header value {value!r}")
        kind = _KINDS.get(name.lower(), _PLAIN)
        if len(_FIELDS) >= _MAX_FIELDS:
            _FIELDS.clear()
        _FIELDS[field] = kind
    return kind


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        line = b"HTTP/1.1 %d %s\r\n" % (status, reason_phrase(status).encode("ascii"))
        _STATUS_LINES[status] = line
    return line


def _encode_head(status: int, headers: list[Header]) -> bytes:
    """The head: the status line, the fields and the blank line that ends it."""
    lines = [_status_line(status)]
    for name, value in headers:
        lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


def _frames_nothing(headers: list[Header]) -> bool:
    """No field of ``headers`` (all validated already) says how the body is framed or whether
    the connection is kept."""
    return all(_FIELDS.get(field) == _PLAIN for field in headers)


class ResponseWriter:
    """The response side of one HTTP/1.1 connection. Call :meth:`start` for each request,
    then :meth:`head`, any :meth:`data`, and :meth:`end` (or :meth:`switch` to accept an
    upgrade); :attr:`reusable` says afterwards whether the connection may carry another."""

    __slots__ = (
        "_ended",
        "_failed",
        "_framing",
        "_http10",
        "_keep_alive",
        "_left",
        "_method",
        "_started",
    )

    def __init__(self) -> None:
        self._method = b""
        self._http10 = False
        self._keep_alive = False  # the connection may carry another request after this one
        self._framing = _BY_LENGTH
        self._left = 0  # body bytes a Content-Length still expects
        self._started = False  # the head (or a 101) is out
        self._ended = False  # the response is complete
        self._failed = False  # a refusal: nothing more can be written on the connection

    def start(self, method: bytes, http10: bool, keep_alive: bool) -> None:
        """A new request: ``keep_alive`` is the request's own verdict (HTTP/1.1 without
        ``Connection: close``)."""
        self._method = method
        self._http10 = http10
        self._keep_alive = keep_alive
        self._started = False
        self._ended = False

    @property
    def reusable(self) -> bool:
        """The response is complete and the connection may carry another request."""
        return self._ended and self._keep_alive and not self._failed

    def informational(self) -> bytes:
        """``100 Continue``."""
        self._check_open()
        return _CONTINUE

    def head(self, status: int, headers: list[Header]) -> bytes:
        """The head of a final response, its framing and ``Connection`` fields set by the
        rules above. ``UnsendableResponse`` for a status below 200, an invalid field or a
        transfer coding other than chunked."""
        self._check_open()
        try:
            return self._head(status, headers)
        except UnsendableResponse:
            self._failed = True
            raise

    def _head(self, status: int, headers: list[Header]) -> bytes:
        if not 200 <= status < 1000:
            raise UnsendableResponse(f"a final response cannot have status {status}")
        length: bytes | None = None
        coding = False
        close = False
        for field in headers:
            name, value = field
            if name == b"content-length" and value.isdigit():  # the one final_headers adds
                found = value
            else:
                kind = _field_kind(field)
                if kind == _PLAIN:
                    continue
                if kind == _CODING:
                    if coding or value.lower() != b"chunked":
                        raise UnsendableResponse("only Transfer-Encoding: chunked can be sent")
                    coding = True
                    continue
                if kind == _CONNECTION:
                    close = close or b"close" in comma_values(value)
                    continue
                values = {part.strip() for part in value.split(b",")}
                found = values.pop()
                if values or not found.isdigit():
                    raise UnsendableResponse("bad Content-Length")
            if len(found) > _MAX_LENGTH_DIGITS:
                raise UnsendableResponse("bad Content-Length")
            if length is not None and length != found:
                raise UnsendableResponse("conflicting Content-Length headers")
            length = found
        method = self._method
        if status in _NO_BODY or method == b"HEAD":
            framing, left = _BY_LENGTH, 0
        elif coding:
            framing, left = _CHUNKED, 0
        elif length is not None:
            framing, left = _BY_LENGTH, int(length)
        else:
            framing, left = _CHUNKED, 0
        # The framing the head announces: a HEAD response announces what GET would get.
        unknown_size = status not in _NO_BODY and (coding or length is None)
        if unknown_size and self._http10 and framing == _CHUNKED:
            framing = _UNTIL_CLOSE  # (an HTTP/1.0 connection never carries a second request)
        if close:
            self._keep_alive = False
        if unknown_size or not self._keep_alive:
            headers = self._rewrite(headers, unknown_size=unknown_size)
        self._framing = framing
        self._left = left
        self._started = True
        return _encode_head(status, headers)

    def _rewrite(self, headers: list[Header], *, unknown_size: bool) -> list[Header]:
        """``headers`` with the framing of a body of unknown size (no Content-Length; chunked
        to an HTTP/1.1 client, nothing to an HTTP/1.0 one) and ``Connection: close`` when
        the connection ends after this response."""
        kept = []
        connection: set[bytes] = set()
        for field in headers:
            is_length = field[0] == b"content-length" and field[1].isdigit()
            kind = _LENGTH if is_length else _field_kind(field)
            if kind == _CONNECTION:
                connection.update(comma_values(field[1]))
            elif unknown_size and kind != _PLAIN:
                continue  # Content-Length and Transfer-Encoding are set here
            else:
                kept.append(field)
        if unknown_size and not self._http10:
            kept.append((b"transfer-encoding", b"chunked"))
        if not self._keep_alive:
            connection.discard(b"keep-alive")
            connection.add(b"close")
        if connection:
            kept.append((b"connection", b", ".join(sorted(connection))))
        return kept

    def whole(self, status: int, headers: list[Header], body: bytes, date: bytes) -> bytes:
        """A whole response with ``body``: the same bytes as :meth:`head` with ``headers``
        finalised (``Date`` and ``Content-Length`` appended, as ``finalize.final_headers``
        does), then :meth:`data` and :meth:`end`, and the body left out where the response
        has none. The head of a response that keeps the connection, has a body and fields
        that frame nothing is encoded once and taken from a cache after that; any other
        response goes the general way. Raises like :meth:`head`."""
        if self._keep_alive and not (self._started or self._failed) and self._method != b"HEAD":
            key = (status, *headers)
            prefix = _HEADS.get(key)
            if prefix is not None:
                self._started = self._ended = True
                self._framing = _BY_LENGTH
                return b"%sdate: %s\r\ncontent-length: %d\r\n\r\n%s" % (
                    prefix,
                    date,
                    len(body),
                    body,
                )
            data = self._general_whole(status, headers, body, date)
            if self._keep_alive and status not in _NO_BODY and _frames_nothing(headers):
                if len(_HEADS) >= _MAX_HEADS:
                    _HEADS.clear()
                _HEADS[key] = _encode_head(status, headers)[:-2]  # (without the blank line)
            return data
        return self._general_whole(status, headers, body, date)

    def _general_whole(self, status: int, headers: list[Header], body: bytes, date: bytes) -> bytes:
        final = final_headers(headers, status, len(body), date)
        data = self.head(status, final)
        if body and body_allowed(self._method, status):
            data += self.data(body)
        return data + self.end()

    def data(self, data: bytes) -> bytes:
        """The framing of one piece of the body. ``UnsendableResponse`` past the
        ``Content-Length`` (or for any byte of a response that has no body)."""
        self._check_body()
        framing = self._framing
        if framing == _BY_LENGTH:
            self._left -= len(data)
            if self._left < 0:
                self._failed = True
                raise UnsendableResponse("too much data for the declared Content-Length")
            return data
        if framing == _CHUNKED:
            return b"%x\r\n%s\r\n" % (len(data), data) if data else b""
        return data

    def data_sent_elsewhere(self, length: int) -> None:
        """Count ``length`` body bytes the caller sends itself (``os.sendfile``): only for a
        body framed by ``Content-Length``; ``UnsendableResponse`` otherwise or past it."""
        self._check_body()
        if self._framing != _BY_LENGTH:
            raise UnsendableResponse("a body sent elsewhere needs a Content-Length")
        self._left -= length
        if self._left < 0:
            self._failed = True
            raise UnsendableResponse("too much data for the declared Content-Length")

    def end(self) -> bytes:
        """The end of the body. ``UnsendableResponse`` short of the ``Content-Length``."""
        self._check_body()
        if self._framing == _BY_LENGTH and self._left:
            self._failed = True
            raise UnsendableResponse("too little data for the declared Content-Length")
        self._ended = True
        return _LAST_CHUNK if self._framing == _CHUNKED else b""

    def switch(self, headers: list[Header]) -> bytes:
        """``101 Switching Protocols`` with ``headers`` (validated, written as they are);
        the connection belongs to another protocol after it."""
        self._check_open()
        for field in headers:
            _field_kind(field)
        self._started = True
        self._keep_alive = False
        return _encode_head(101, headers)

    def _check_open(self) -> None:
        if self._started or self._failed:
            self._failed = True
            raise UnsendableResponse("a response was already written")

    def _check_body(self) -> None:
        if not self._started or self._ended or self._failed:
            self._failed = True
            raise UnsendableResponse("no response body is being written")
