"""The HTTP/1.1 adapter on h11: raw bytes in, request events out; responses out as bytes.

h11 owns the protocol state (message framing, keep-alive, ``Expect: 100-continue``). What a
front server needs on top is shared with the llhttp adapter (``http1_base.BaseHTTP1Adapter``):
the head is cut out of the byte stream and checked strictly before h11 sees it, a chunked
body's framing is checked too, and h11 is fed body bytes no further than the body's end (so
pipelined requests stay ours to check). h11's status hints become ``ProtocolError`` statuses.
"""

from __future__ import annotations

import h11

try:  # h11's private form of a header list, (raw name, lower-case name, value) triples:
    # used to cache response field validation and to read request fields in one step
    from h11._headers import Headers as H11Headers
    from h11._headers import normalize_and_validate

    _FIELD_CACHE = normalize_and_validate([(b"A", b"b")])._full_items == [(b"A", b"a", b"b")]
except (ImportError, AttributeError, TypeError):  # another h11: it validates every field
    _FIELD_CACHE = False

from .._errors import reason_phrase
from .errors import ProtocolError, UnsendableResponse
from .head import HeadLimits
from .http1_base import END_OF_BODY, NEED_DATA, PAUSED, BaseHTTP1Adapter, BodyChunk, Event

__all__ = ["HTTP1Adapter", "parse_with_h11", "render_simple_response"]

_REASONS: dict[int, bytes] = {}


class HTTP1Adapter(BaseHTTP1Adapter):
    """One HTTP/1.1 connection's protocol state on h11, without I/O.

    Feed received bytes with :meth:`receive_data` (``b""`` for EOF) and pull events with
    :meth:`next_event`. Serialize the response with :meth:`send_head`, :meth:`send_data` and
    :meth:`send_end`, then call :meth:`start_next_cycle`.
    """

    __slots__ = ("_h11",)

    def __init__(self, limits: HeadLimits | None = None) -> None:
        super().__init__(limits)
        self._h11 = h11.Connection(h11.SERVER)

    # -- receiving --------------------------------------------------------------------------
    def next_event(self) -> Event:
        """The next event, ``NEED_DATA``, ``PAUSED`` or ``CLOSED``. Raises ``ProtocolError``."""
        # These first lines are the other adapter's too: shared through a base method, one
        # more call per request head cost 1.9k instructions a request (0.4 %, measured).
        if self.in_body:
            return self._next_body_event()
        if self._head is not None:
            return PAUSED
        head = self._cut_head()
        if not isinstance(head, bytes):  # NEED_DATA or CLOSED
            return head
        event = _receive_head(self._h11, head)
        return self._start_request(
            event.method, event.target, event.http_version == b"1.0", _fields(event.headers)
        )

    def _next_body_event(self) -> Event:
        h = self._h11
        try:
            if self._buffer or self._eof:  # feed first: one h11 pass per event, not two
                self._feed_body()
            event = h.next_event()
        except h11.RemoteProtocolError as exc:
            raise _as_protocol_error(exc) from None
        if type(event) is h11.Data:
            return BodyChunk(bytes(event.data))
        if type(event) is h11.EndOfMessage:
            self.in_body = False
            return END_OF_BODY
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

    def take_whole_body(self) -> bytes | None:
        """The rest of a Content-Length body when all of it is buffered, its end read too;
        else ``None``. (The base class's steps, without an event object per step.)"""
        left = self._body_left
        buffer = self._buffer
        if not self.in_body or self._chunked is not None or left > len(buffer):
            return None
        h = self._h11
        if left:
            h.receive_data(bytes(buffer[:left]))
            del buffer[:left]
            self._body_left = 0
        data = b""
        event = h.next_event()
        if type(event) is h11.Data:
            data = bytes(event.data)
            event = h.next_event()
        if type(event) is not h11.EndOfMessage:  # pragma: no cover - the body was all fed
            raise AssertionError(f"{event!r} after a whole Content-Length body")
        self.in_body = False
        return data

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

    def send_data(self, data: bytes) -> bytes:
        """Framing for one piece of response body (chunked or plain, as h11 decided).
        ``UnsendableResponse`` past the response's Content-Length."""
        try:
            return self._h11.send(h11.Data(data=data)) or b""
        except h11.LocalProtocolError as exc:
            raise UnsendableResponse(str(exc)) from None

    def send_data_elsewhere(self, length: int) -> None:
        """Count ``length`` body bytes sent without this adapter (``os.sendfile``), through
        h11's pass-through send (made for this): only for a Content-Length body, which h11
        passes on unframed; ``UnsendableResponse`` otherwise or past its length."""
        placeholder = _Length(length)
        try:
            pieces = self._h11.send_with_data_passthrough(h11.Data(data=placeholder))  # type: ignore[arg-type]
        except h11.LocalProtocolError as exc:
            raise UnsendableResponse(str(exc)) from None
        if pieces != [placeholder]:  # type: ignore[comparison-overlap]  # (chunked framing)
            raise UnsendableResponse("a body sent elsewhere needs a Content-Length")

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
        self._request_line = ()  # (not held while the connection waits)


class _Length:
    """Stands for body bytes sent elsewhere: h11 only takes their ``len``."""

    __slots__ = ("length",)

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length


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


def _fields(headers: H11Headers) -> list[tuple[bytes, bytes]]:
    """h11's parsed fields as ``(lower-case name, value)`` pairs."""
    # From h11's private triples when it has them: iterating its ``Headers`` sequence costs a
    # generator step and a call per field (some 1,300 instructions each).
    if _FIELD_CACHE:
        return [(name, value) for _, name, value in headers._full_items]
    return list(headers)


def _receive_head(connection: h11.Connection, head: bytes) -> h11.Request:
    """The request h11 parses from a complete, checked ``head``; h11's refusal as a
    ``ProtocolError``."""
    try:
        connection.receive_data(head)
        event = connection.next_event()
    except h11.RemoteProtocolError as exc:
        raise _as_protocol_error(exc) from None
    assert type(event) is h11.Request
    return event


def parse_with_h11(head: bytes) -> tuple[bytes, bytes, bool, list[tuple[bytes, bytes]]]:
    """h11's reading of a complete, checked request ``head``, by a connection of its own:
    ``(method, target, is_http10, fields)``, or h11's refusal as a ``ProtocolError``. The
    reference verdict for heads the llhttp adapter does not judge itself."""
    event = _receive_head(h11.Connection(h11.SERVER), head)
    return event.method, event.target, event.http_version == b"1.0", _fields(event.headers)


def _as_protocol_error(exc: h11.RemoteProtocolError) -> ProtocolError:
    status = exc.error_status_hint if 400 <= exc.error_status_hint < 600 else 400
    return ProtocolError(status, "malformed request")


def render_simple_response(
    status: int, headers: list[tuple[bytes, bytes]], body: bytes, *, send_body: bool = True
) -> bytes:
    """A complete ``Connection: close`` response, serialized without h11: for answers to
    requests h11 never accepted (a broken head, a timeout). The reason phrase comes from a
    fixed table, never from the peer. ``send_body=False`` (the answer to a ``HEAD``): the
    head says the body's length, the body is left out."""
    lines = [b"HTTP/1.1 %d %s" % (status, reason_phrase(status).encode("ascii"))]
    lines += [name + b": " + value for name, value in headers]
    lines += [b"content-length: %d" % len(body), b"connection: close", b"", b""]
    return b"\r\n".join(lines) + (body if send_body else b"")
