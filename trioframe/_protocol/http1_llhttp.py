"""The HTTP/1.1 adapter on llhttp (the ``speedups`` extra: httptools, its Python binding), with
trioframe's own body framing, response writer and keep-alive cycle.

It has the interface of ``http1.HTTP1Adapter`` and is held to exactly its strictness:

- the head is cut and checked by the same code (``http1_base.BaseHTTP1Adapter``), and the
  request line was split and checked there too;
- llhttp parses the header section (a C parser: the largest part of h11's cost per request);
- a head llhttp refuses, or one with what llhttp judges differently from h11 (a second Host,
  a transfer coding other than one ``chunked``), is judged by h11 itself
  (``http1.parse_with_h11``), on a connection of its own: h11's refusal is the answer, and a
  head h11 accepts is served from h11's reading of it. These are heads no common client
  sends, so the fast path never pays for h11;
- the body is framed by what both adapters share (a Content-Length counted down, a chunked
  body decoded from ``chunked.ChunkedFraming``'s strict walk), never by llhttp;
- the response side follows h11's rules (``http1_writer.ResponseWriter``);
- a head whose very bytes were read before, with the same limits and without fault, is read
  as it was then (``_KNOWN_HEADS``): neither checked nor parsed again.

``tests/fuzz/test_parser_differential.py`` holds the two adapters to the same statuses,
connection outcomes and handler calls.
"""

from __future__ import annotations

import httptools

from .errors import ProtocolError, UnsendableResponse
from .head import HeadLimits, check_head
from .http1 import parse_with_h11
from .http1_base import END_OF_BODY, NEED_DATA, PAUSED, BaseHTTP1Adapter, BodyChunk, Event
from .http1_writer import ResponseWriter
from .request_head import RequestHead

__all__ = ["LLHTTPAdapter"]


class _HeadReader:
    """An llhttp parser and what it reports: the header section's fields and whether the
    message ended within the head it was fed. One parses heads for every connection of the
    thread in turn (``_IDLE_READERS``): a head is parsed whole, in one synchronous step,
    so no connection holds a parser while it waits."""

    __slots__ = ("complete", "fields", "parser")

    def __init__(self) -> None:
        self.fields: list[tuple[bytes, bytes]] = []
        self.complete = False
        self.parser = httptools.HttpRequestParser(self)

    # llhttp's callbacks (the header section's fields, the end of a body-less message)
    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields.append((name.lower(), value.rstrip(b" \t")))

    def on_message_complete(self) -> None:
        self.complete = True


#: Head readers between heads, ready for the next: a reader is made only when this is
#: empty, so there are never more than threads parsing at the same time.
_IDLE_READERS: list[_HeadReader] = []


#: A head already read (with these limits), what it was read as: the request (immutable, its
#: fields a tuple: the same value serves every request of this head), the keep-alive and
#: upgrade facts, and whether it is HTTP/1.0.
_KnownHead = tuple[HeadLimits, RequestHead, bool, bool, bool]
#: The heads read on the fast path (no refusal, nothing for h11 to judge), by their bytes: a
#: client sends the same head again and again (its next request on the connection, the same
#: request on another), and a head seen before is not checked and parsed again. Heads of
#: at most ``_MAX_KNOWN_HEAD_SIZE`` bytes; the cache starts over when full.
_KNOWN_HEADS: dict[bytes, _KnownHead] = {}
_MAX_KNOWN_HEADS = 512
_MAX_KNOWN_HEAD_SIZE = 2048


class LLHTTPAdapter(BaseHTTP1Adapter):
    """One HTTP/1.1 connection's protocol state on llhttp, without I/O; the interface of
    ``HTTP1Adapter``."""

    __slots__ = ("_expect_continue", "_writer")

    def __init__(self, limits: HeadLimits | None = None) -> None:
        super().__init__(limits)
        self._writer = ResponseWriter()
        self._expect_continue = False

    # -- receiving --------------------------------------------------------------------------
    def next_event(self) -> Event:
        """The next event, ``NEED_DATA``, ``PAUSED`` or ``CLOSED``. Raises ``ProtocolError``."""
        # These first lines are the other adapter's too: shared through a base method, one
        # more call per request head cost 1.9k instructions a request (0.4 %, measured).
        if self.in_body:
            return self._next_body_event()
        if self._head is not None:
            return PAUSED
        head = self._find_head()
        if not isinstance(head, bytes):  # NEED_DATA or CLOSED
            return head
        known = _KNOWN_HEADS.get(head)
        if known is not None and known[0] is self.limits:
            del self._buffer[: len(head)]
            _, request, keep_alive, upgrade, http10 = known
            self._enter(request, keep_alive, upgrade, False)
            self._writer.start(request.method, http10, keep_alive)
            self._expect_continue = request.expects_continue
            return request
        self._request_line = check_head(head, self.limits)
        del self._buffer[: len(head)]
        method, target, version = self._request_line
        try:  # (not a look then a pop: another thread may take the last between the two)
            reader = _IDLE_READERS.pop()
        except IndexError:  # none idle: the first head, or another thread is parsing one
            reader = _HeadReader()
        fields = reader.fields = []
        try:
            reader.parser.feed_data(head)
        except httptools.HttpParserUpgrade:
            reader.complete = False  # llhttp stops at an upgrade: it cannot go on
        except httptools.HttpParserError:
            return self._judged_by_h11(head)  # (this reader is dropped)
        try:
            request = self._start_request(method, target, version == b"HTTP/1.0", fields)
        except ProtocolError:
            parse_with_h11(head)  # h11's refusal comes first, as on the h11 path
            raise  # (this reader is dropped)
        # Put back for the next head, with a new parser unless llhttp is ready for another
        # message: it saw this one end (it was not left waiting for a body, which is framed
        # here, nor stopped at an upgrade) and the connection may carry another. (Were
        # llhttp to judge the connection's end differently, its error on the next head
        # would hand that head to h11, as any error of llhttp does.)
        if not (reader.complete and self._keep_alive):
            reader.parser = httptools.HttpRequestParser(reader)
        reader.complete = False
        _IDLE_READERS.append(reader)
        if self._unusual:
            return self._judged_by_h11(head)
        http10 = request.version == "1.0"
        self._writer.start(method, http10, self._keep_alive)
        self._expect_continue = request.expects_continue
        if len(head) <= _MAX_KNOWN_HEAD_SIZE:
            if len(_KNOWN_HEADS) >= _MAX_KNOWN_HEADS:
                _KNOWN_HEADS.clear()
            # With a tuple of fields: the one value handed to every request of this head.
            request = self._head = request._replace(headers=tuple(request.headers))
            keep_alive, upgrade = self._keep_alive, self._upgrade_proposed
            _KNOWN_HEADS[head] = (self.limits, request, keep_alive, upgrade, http10)
        return request

    def _judged_by_h11(self, head: bytes) -> Event:
        """h11's verdict on ``head``: its refusal, or the request as h11 reads it."""
        method, target, http10, fields = parse_with_h11(head)
        request = self._start_request(method, target, http10, fields)
        self._writer.start(method, http10, self._keep_alive)
        self._expect_continue = request.expects_continue
        return request

    def _next_body_event(self) -> Event:
        """The next body event. As in h11, a client that sends body bytes (or its end) no
        longer waits for ``100 Continue``."""
        buffer = self._buffer
        if self._chunked is None:
            left = self._body_left
            if not left:  # (a body-less request's end comes here first)
                self.in_body = self._expect_continue = False
                return END_OF_BODY
            size = min(left, len(buffer))
            if size:
                self._body_left = left - size
                data = bytes(buffer[:size])
                del buffer[:size]
                self._expect_continue = False
                return BodyChunk(data)
        else:
            pieces: list[tuple[int, int]] = []
            size = self._chunked.check(buffer, pieces)
            data = b"".join([buffer[start:end] for start, end in pieces])
            del buffer[:size]
            if data:
                self._expect_continue = False
                return BodyChunk(data)
            if self._chunked.done:
                self.in_body = self._expect_continue = False
                return END_OF_BODY
        if self._eof:
            raise ProtocolError(400, "connection closed inside a request body")
        return NEED_DATA

    @property
    def they_expect_continue(self) -> bool:
        """True when the client waits for ``100 Continue`` before sending the body."""
        return self._expect_continue

    # -- sending ----------------------------------------------------------------------------
    def send_continue(self) -> bytes:
        """``100 Continue``, to send before reading a body the client holds back."""
        self._expect_continue = False
        return self._writer.informational()

    def send_head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The response head. ``UnsendableResponse`` when it cannot be written (the
        connection then cannot carry another response)."""
        self._expect_continue = False
        return self._writer.head(status, headers)

    def send_whole(
        self,
        method: bytes,
        status: int,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        date: bytes,
    ) -> bytes:
        """A whole response (see ``BaseHTTP1Adapter.send_whole``), its head cached
        (``ResponseWriter.whole``: the writer knows the request's method already)."""
        self._expect_continue = False
        return self._writer.whole(status, headers, body, date)

    def send_switch(self, headers: list[tuple[bytes, bytes]]) -> bytes:
        """``101 Switching Protocols``; ``ProtocolError`` (400) when the request did not
        propose an upgrade or still has a body to read."""
        if not self._upgrade_proposed or self.in_body:
            raise ProtocolError(400, "this request cannot switch protocols")
        self._expect_continue = False
        try:
            return self._writer.switch(headers)
        except UnsendableResponse:
            raise ProtocolError(400, "this request cannot switch protocols") from None

    def send_data(self, data: bytes) -> bytes:
        """Framing for one piece of response body. ``UnsendableResponse`` past the
        response's Content-Length."""
        return self._writer.data(data)

    def send_data_elsewhere(self, length: int) -> None:
        """Count ``length`` body bytes sent without this adapter (``os.sendfile``): only
        for a Content-Length body; ``UnsendableResponse`` otherwise or past its length."""
        self._writer.data_sent_elsewhere(length)

    def send_end(self) -> bytes:
        """The end of the response body. ``UnsendableResponse`` short of its Content-Length."""
        return self._writer.end()

    @property
    def can_reuse(self) -> bool:
        """After the response: whether the connection may carry another request."""
        return self._writer.reusable

    def start_next_cycle(self) -> None:
        """Reset for the next request; call after the response and the request body ended."""
        self._head = None
        self._request_line = ()  # (not held while the connection waits)
