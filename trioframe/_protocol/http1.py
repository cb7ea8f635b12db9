"""The HTTP/1.1 adapter: raw bytes in, request events out; responses out as bytes.

h11 owns the protocol state (message framing, keep-alive, ``Expect: 100-continue``). This
adapter adds what a front server needs on top: the head is cut out of the byte stream and
checked strictly (``head.HeadScanner``, ``head.check_head``) before h11 sees it; a chunked
body's framing is checked strictly too (``chunked.ChunkedFraming``); h11 is fed body bytes no
further than the body's end (so pipelined requests stay ours to check); and h11's status hints
become ``ProtocolError`` statuses. A request that opens with a TLS handshake record is a TLS
client on a plain port: it is refused without an answer.
"""

from __future__ import annotations

from typing import Final

import attrs
import h11

try:  # h11's private validated form of a header list: used only to cache validation
    from h11._headers import Headers as H11Headers
    from h11._headers import normalize_and_validate

    _FIELD_CACHE = bool(normalize_and_validate([(b"a", b"b")])._full_items)
except (ImportError, AttributeError, TypeError):  # another h11: it validates every field
    _FIELD_CACHE = False

from .._errors import reason_phrase
from .chunked import ChunkedFraming
from .errors import ProtocolError, UnsendableResponse
from .head import HeadLimits, HeadScanner, check_head, check_host
from .request_head import RequestHead

__all__ = [
    "CLOSED",
    "NEED_DATA",
    "PAUSED",
    "BodyChunk",
    "BodyEnd",
    "HTTP1Adapter",
    "RequestHead",
    "render_simple_response",
]


@attrs.frozen
class BodyChunk:
    """A piece of the request body."""

    data: bytes


@attrs.frozen
class BodyEnd:
    """The request body is complete."""


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA: Final = _Sentinel("NEED_DATA")
"""More bytes are needed before another event."""
PAUSED: Final = _Sentinel("PAUSED")
"""The request is complete; no events until the response is sent and the cycle restarts."""
CLOSED: Final = _Sentinel("CLOSED")
"""The peer closed the connection between requests."""

Event = RequestHead | BodyChunk | BodyEnd | _Sentinel

_TLS_HANDSHAKE = b"\x16"  # the first byte of a TLS handshake record (a ClientHello)
_REASONS: dict[int, bytes] = {}
_END_OF_BODY = BodyEnd()


class HTTP1Adapter:
    """One HTTP/1.1 connection's protocol state, without I/O.

    Feed received bytes with :meth:`receive_data` (``b""`` for EOF) and pull events with
    :meth:`next_event`. Serialize the response with :meth:`send_head`, :meth:`send_data` and
    :meth:`send_end`, then call :meth:`start_next_cycle`.
    """

    def __init__(self, limits: HeadLimits | None = None) -> None:
        self.limits = limits or HeadLimits()
        self._h11 = h11.Connection(h11.SERVER)
        self._buffer = bytearray()
        self._eof = False
        self._in_body = False
        self._head: RequestHead | None = None
        self._head_scanner = HeadScanner(self.limits)
        self._body_left = 0  # bytes of a Content-Length body not fed to h11
        self._chunked: ChunkedFraming | None = None  # a chunked body's framing check

    # -- receiving --------------------------------------------------------------------------
    def receive_data(self, data: bytes | bytearray) -> None:
        """Add received bytes; ``b""`` means the peer closed its side."""
        if data:
            self._buffer += data
        else:
            self._eof = True

    @property
    def buffered(self) -> int:
        """How many received bytes are waiting to be parsed."""
        return len(self._buffer)

    @property
    def eof(self) -> bool:
        """True once the peer has closed its sending side."""
        return self._eof

    @property
    def idle(self) -> bool:
        """True between requests with no byte of the next request received."""
        return self._head is None and not self._buffer

    def next_event(self) -> Event:
        """The next event, ``NEED_DATA``, ``PAUSED`` or ``CLOSED``. Raises ``ProtocolError``."""
        if self._in_body:
            return self._next_body_event()
        if self._head is not None:
            return PAUSED
        return self._next_head()

    def _next_head(self) -> Event:
        buffer = self._buffer
        while buffer.startswith(b"\r\n"):  # RFC 9112 2.2: ignore empty lines before a request
            del buffer[:2]
            self._head_scanner.restart()
        if buffer.startswith(_TLS_HANDSHAKE):
            raise ProtocolError(400, "TLS handshake on a plain HTTP connection", answer=False)
        size = self._head_scanner.find_end(buffer)
        if not size:
            if self._eof:
                if buffer:
                    raise ProtocolError(400, "connection closed inside a request head")
                return CLOSED
            return NEED_DATA
        head = bytes(buffer[:size])
        check_head(head, self.limits)
        del buffer[:size]
        try:
            self._h11.receive_data(head)
            event = self._h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise _as_protocol_error(exc) from None
        assert isinstance(event, h11.Request)
        content_length: int | None = None
        chunked = False
        expects_continue = False
        has_host = False
        headers = []
        for name, value in event.headers:  # one pass: the list and the framing facts
            headers.append((name, value))
            if name == b"content-length":
                content_length = int(value)
            elif name == b"transfer-encoding":
                chunked = True
            elif name == b"expect" and value.lower() == b"100-continue":
                expects_continue = True
            elif name == b"host":  # h11 refuses a repeated Host itself
                check_host(value)
                has_host = True
        http10 = event.http_version == b"1.0"
        if not (has_host or http10):  # h11 requires it of 1.1 only; 1.2+ is read as 1.1
            raise ProtocolError(400, "missing Host header")
        self._head = RequestHead(
            method=event.method,
            target=event.target,
            version="1.0" if http10 else "1.1",
            headers=headers,
            content_length=content_length,
            chunked=chunked,
            expects_continue=expects_continue,
        )
        self._body_left = content_length or 0
        self._chunked = ChunkedFraming(self.limits) if chunked else None
        self._in_body = True
        return self._head

    def _next_body_event(self) -> Event:
        h = self._h11
        try:
            event = h.next_event()
            if event is h11.NEED_DATA and (self._buffer or self._eof):
                self._feed_body()
                event = h.next_event()
        except h11.RemoteProtocolError as exc:
            raise _as_protocol_error(exc) from None
        if type(event) is h11.Data:
            return BodyChunk(bytes(event.data))
        if type(event) is h11.EndOfMessage:
            self._in_body = False
            return _END_OF_BODY
        if event is h11.NEED_DATA:
            if self._eof:
                raise ProtocolError(400, "connection closed inside a request body")
            return NEED_DATA
        raise ProtocolError(400, "unexpected data in request body")  # pragma: no cover

    def _feed_body(self) -> None:
        buffer = self._buffer
        if self._eof and not buffer:
            self._h11.receive_data(b"")
            return
        if self._chunked is None:
            size = min(self._body_left, len(buffer))
            self._body_left -= size
        else:
            size = self._chunked.check(buffer)
        if size:
            self._h11.receive_data(bytes(buffer[:size]))
            del buffer[:size]

    @property
    def in_body(self) -> bool:
        """True while the current request's body has not been read to its end."""
        return self._in_body

    @property
    def they_expect_continue(self) -> bool:
        """True when the client waits for ``100 Continue`` before sending the body."""
        return self._h11.they_are_waiting_for_100_continue

    # -- sending ----------------------------------------------------------------------------
    def send_continue(self) -> bytes:
        """``100 Continue``, to send before reading a body the client holds back."""
        event = h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
        return self._h11.send(event) or b""

    def send_head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The response head (status line and headers). ``UnsendableResponse`` when h11 refuses
        it (a status or header it cannot write); h11 is then in its error state and the
        connection cannot carry another response. (Each ``send_*`` catches h11's error itself:
        a shared helper would be one more call on every response.)"""
        reason = _REASONS.get(status)
        if reason is None:
            reason = _REASONS[status] = reason_phrase(status).encode("ascii")
        try:
            fields = _h11_fields(headers)
            return self._h11.send(h11.Response(status_code=status, headers=fields, reason=reason))
        except h11.LocalProtocolError as exc:
            raise UnsendableResponse(str(exc)) from None

    def send_switch(self, headers: list[tuple[bytes, bytes]]) -> bytes:
        """``101 Switching Protocols`` for a request that asked to upgrade; after it the
        connection belongs to another protocol (:attr:`can_reuse` is false) and the bytes
        received past the request are in :meth:`take_buffered`. Raises ``ProtocolError``
        (400) when the request did not propose an upgrade or still has a body to read."""
        event = h11.InformationalResponse(
            status_code=101, headers=headers, reason=b"Switching Protocols"
        )
        try:
            return self._h11.send(event) or b""
        except h11.LocalProtocolError:
            raise ProtocolError(400, "this request cannot switch protocols") from None

    def take_buffered(self) -> bytes:
        """Hand over (and forget) the received bytes not parsed yet: after a protocol
        switch, they belong to the new protocol."""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    def send_data(self, data: bytes) -> bytes:
        """Framing for one piece of response body (chunked or plain, as h11 decided).
        ``UnsendableResponse`` past the response's Content-Length."""
        try:
            return self._h11.send(h11.Data(data=data)) or b""
        except h11.LocalProtocolError as exc:
            raise UnsendableResponse(str(exc)) from None

    def send_end(self) -> bytes:
        """The end of the response body. ``UnsendableResponse`` short of its Content-Length."""
        try:
            return self._h11.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            raise UnsendableResponse(str(exc)) from None

    @property
    def can_reuse(self) -> bool:
        """After the response: whether the connection may carry another request (h11's
        keep-alive verdict; the request body may still need draining)."""
        return self._h11.our_state is h11.DONE

    def start_next_cycle(self) -> None:
        """Reset for the next request; call after the response and the request body ended.
        (h11 was never fed a byte past the request, so nothing is left in it.)"""
        self._h11.start_next_cycle()
        self._head = None


_FIELDS: dict[tuple[bytes, bytes], tuple[bytes, bytes, bytes]] = {}
_MAX_FIELDS = 1024  # the cache starts over when full (per-response values pass through it)


def _h11_fields(headers: list[tuple[bytes, bytes]]) -> H11Headers | list[tuple[bytes, bytes]]:
    """``headers`` as h11's own validated form, each field validated by h11 once and then
    taken from a cache (most responses repeat the same fields: a content type, ``Date`` for
    a second). A ``Content-Length`` of plain digits (the one ``final_headers`` adds) needs no
    lookup. Fields whose rules span the whole list (a second ``Content-Length``, any other
    framing header) return ``headers`` as they are, for h11 to check whole. Raises h11's
    ``LocalProtocolError`` for a field it refuses. With an h11 whose private header form is not
    the one this was written against, ``headers`` go to h11 as they are (slower, as safe)."""
    if not _FIELD_CACHE:
        return headers
    items = []
    has_length = False
    for field in headers:
        item = _FIELDS.get(field)
        if item is None:
            name, value = field
            if name == b"content-length" and not has_length and value.isdigit() and len(value) < 20:
                has_length = True
                items.append((name, name, value))
                continue
            if name.lower() in (b"content-length", b"transfer-encoding"):
                return headers
            item = normalize_and_validate([field])._full_items[0]
            if len(_FIELDS) >= _MAX_FIELDS:
                _FIELDS.clear()
            _FIELDS[field] = item
        items.append(item)
    return H11Headers(items)


def _as_protocol_error(exc: h11.RemoteProtocolError) -> ProtocolError:
    status = exc.error_status_hint if 400 <= exc.error_status_hint < 600 else 400
    return ProtocolError(status, "malformed request")


def render_simple_response(status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """A complete ``Connection: close`` response, serialized without h11: for answers to
    requests h11 never accepted (a broken head, a timeout). The reason phrase comes from a
    fixed table, never from the peer."""
    lines = [b"HTTP/1.1 %d %s" % (status, reason_phrase(status).encode("ascii"))]
    lines += [name + b": " + value for name, value in headers]
    lines += [b"content-length: %d" % len(body), b"connection: close", b"", b""]
    return b"\r\n".join(lines) + body
