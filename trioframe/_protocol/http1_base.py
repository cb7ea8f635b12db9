"""What both HTTP/1.1 adapters share on the receiving side: the events, the byte buffer, the
strict cut of a request head out of the stream, and the bound on a body's bytes.

An adapter (``http1.HTTP1Adapter`` on h11, ``http1_llhttp.LLHTTPAdapter`` on llhttp) turns
received bytes into events. Before its parser sees a head, ``BaseHTTP1Adapter`` finds the head's
end (``head.HeadScanner``, refusing a partial head as soon as it cannot become valid) and checks
the whole head (``head.check_head``); after it, ``body_size`` says how many buffered bytes
belong to the body: at most the rest of a Content-Length, or the bytes a chunked body's framing
check (``chunked.ChunkedFraming``) has passed. No parser ever sees a byte past the request, so
the next request of the connection is checked the same way. A request that opens with a TLS
handshake record is a TLS client on a plain port: it is refused without an answer.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Final

import attrs

from .chunked import ChunkedFraming
from .errors import ProtocolError
from .finalize import body_allowed, final_headers
from .head import HeadLimits, HeadScanner, absolute_form_authority, check_head, check_host
from .request_head import RequestHead

__all__ = [
    "CLOSED",
    "NEED_DATA",
    "PAUSED",
    "BaseHTTP1Adapter",
    "BodyChunk",
    "BodyEnd",
    "Event",
    "comma_values",
]


# Not frozen, but never changed: a frozen attrs class sets its field through
# ``object.__setattr__``, which costs more, once per piece.
@attrs.define
class BodyChunk:
    """A piece of the request body; never changed once made."""

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

END_OF_BODY: Final = BodyEnd()

#: the fields ``_start_request`` reads facts from
_FACT_FIELDS = frozenset(
    [b"content-length", b"host", b"transfer-encoding", b"connection", b"expect", b"upgrade"]
)
_new_tuple = tuple.__new__
_TLS_HANDSHAKE = 0x16  # the first byte of a TLS handshake record (a ClientHello)


class BaseHTTP1Adapter(abc.ABC):
    """One HTTP/1.1 connection's protocol state, without I/O: the interface both adapters
    have, and the receiving state they share.

    Feed received bytes with :meth:`receive_data` (``b""`` for EOF) and pull events with
    :meth:`next_event`. Serialize the response with :meth:`send_head`, :meth:`send_data` and
    :meth:`send_end`, then call :meth:`start_next_cycle`."""

    __slots__ = (
        "_body_left",
        "_buffer",
        "_chunked",
        "_eof",
        "_head",
        "_head_scanner",
        "_keep_alive",
        "_request_line",
        "_unusual",
        "_upgrade_proposed",
        "in_body",
        "limits",
    )

    def __init__(self, limits: HeadLimits | None = None) -> None:
        self.limits = limits or HeadLimits()
        self._buffer = bytearray()
        self._eof = False
        #: True while the current request's body has not been read to its end (read it as
        #: an attribute: a property costs a call, and the server asks several times a request)
        self.in_body = False
        self._head: RequestHead | None = None
        self._head_scanner = HeadScanner(self.limits)
        #: the current head's method, target, version (``()`` between requests)
        self._request_line: Sequence[bytes] = ()
        self._body_left = 0  # bytes of a Content-Length body not released yet
        self._chunked: ChunkedFraming | None = None  # a chunked body's framing check
        self._keep_alive = False  # see _start_request
        self._upgrade_proposed = False
        self._unusual = False

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

    def take_whole_body(self) -> bytes | None:
        """The rest of a Content-Length body when all of it is buffered, its end read too
        (:attr:`in_body` is then false); ``None`` otherwise (a chunked body, one still
        arriving, no body being read). One synchronous step instead of an event per piece."""
        if not self.in_body or self._chunked is not None or self._body_left > len(self._buffer):
            return None
        event = self.next_event()
        data = b""
        if type(event) is BodyChunk:
            data = event.data
            event = self.next_event()
        if event is not END_OF_BODY:  # pragma: no cover - the whole body was buffered
            raise AssertionError(f"{event!r} after a whole Content-Length body")
        return data

    def take_buffered(self) -> bytes:
        """Hand over (and forget) the received bytes not parsed yet: after a protocol
        switch, they belong to the new protocol."""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    @abc.abstractmethod
    def next_event(self) -> Event:
        """The next event, ``NEED_DATA``, ``PAUSED`` or ``CLOSED``. Raises ``ProtocolError``."""

    @property
    @abc.abstractmethod
    def they_expect_continue(self) -> bool:
        """True when the client waits for ``100 Continue`` before sending the body."""

    @abc.abstractmethod
    def send_continue(self) -> bytes:
        """``100 Continue``, to send before reading a body the client holds back."""

    @abc.abstractmethod
    def send_head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The response head (status line and headers). ``UnsendableResponse`` when it cannot
        be written (a status or header HTTP/1.1 cannot carry); the connection then cannot
        carry another response."""

    @abc.abstractmethod
    def send_switch(self, headers: list[tuple[bytes, bytes]]) -> bytes:
        """``101 Switching Protocols`` for a request that asked to upgrade; after it the
        connection belongs to another protocol (:attr:`can_reuse` is false) and the bytes
        received past the request are in :meth:`take_buffered`. Raises ``ProtocolError``
        (400) when the request did not propose an upgrade or still has a body to read."""

    def send_whole(
        self,
        method: bytes,
        status: int,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        date: bytes,
    ) -> bytes:
        """A whole response to a ``method`` request: ``headers`` as the application set them,
        finalised here (``finalize.final_headers``, with ``date``), then ``body`` (left out
        where the response has none) and the body's end. Raises like the three steps."""
        data = self.send_head(status, final_headers(headers, status, len(body), date))
        if body and body_allowed(method, status):
            data += self.send_data(body)
        return data + self.send_end()

    @abc.abstractmethod
    def send_data(self, data: bytes) -> bytes:
        """Framing for one piece of response body (chunked or plain, as the head decided).
        ``UnsendableResponse`` past the response's Content-Length."""

    @abc.abstractmethod
    def send_data_elsewhere(self, length: int) -> None:
        """Count ``length`` body bytes the connection sends itself (``os.sendfile``): only
        for a body framed by Content-Length. ``UnsendableResponse`` otherwise or past it."""

    @abc.abstractmethod
    def send_end(self) -> bytes:
        """The end of the response body. ``UnsendableResponse`` short of its Content-Length."""

    @property
    @abc.abstractmethod
    def can_reuse(self) -> bool:
        """After the response: whether the connection may carry another request (the
        request body may still need draining)."""

    @abc.abstractmethod
    def start_next_cycle(self) -> None:
        """Reset for the next request; call after the response and the request body ended."""

    def _cut_head(self) -> bytes | _Sentinel:
        """The next complete, checked request head (removed from the buffer; its request
        line's method, target and version in ``_request_line``), or ``NEED_DATA``, or
        ``CLOSED`` when the peer closed between requests. Raises ``ProtocolError``."""
        head = self._find_head()
        if type(head) is bytes:
            self._request_line = check_head(head, self.limits)
            del self._buffer[: len(head)]
        return head

    def _find_head(self) -> bytes | _Sentinel:
        """The next complete request head, not checked yet (nor removed from the buffer), or
        ``NEED_DATA``, or ``CLOSED`` when the peer closed between requests. Raises
        ``ProtocolError`` for what ``HeadScanner`` refuses."""
        buffer = self._buffer
        first = buffer[0] if buffer else -1  # (an index: cheaper than two startswith calls)
        if first == 13:  # CR
            while buffer.startswith(b"\r\n"):  # RFC 9112 2.2: ignore empty lines first
                del buffer[:2]
                self._head_scanner.restart()
            first = buffer[0] if buffer else -1
        if first == _TLS_HANDSHAKE:
            raise ProtocolError(400, "TLS handshake on a plain HTTP connection", answer=False)
        size = self._head_scanner.find_end(buffer)
        if not size:
            if self._eof:
                if buffer:
                    raise ProtocolError(400, "connection closed inside a request head")
                return CLOSED
            return NEED_DATA
        # (the whole buffer, most often: one copy, not a slice and a copy)
        return bytes(buffer) if size == len(buffer) else bytes(buffer[:size])

    def _start_request(
        self, method: bytes, target: bytes, http10: bool, fields: list[tuple[bytes, bytes]]
    ) -> RequestHead:
        """The request head from its parsed parts (``fields``: lower-case names), with its
        framing and connection facts in one pass; the body's bound is set up from them.

        Sets what the response side needs, by h11's rules: ``_keep_alive`` (HTTP/1.1 without
        ``Connection: close``), ``_upgrade_proposed`` (an ``Upgrade`` field). ``_unusual``
        says the head has what only the reference parser judges (a second Host, a transfer
        coding other than one ``chunked``). An absolute-form target's authority is the request's
        Host (RFC 9112 section 3.2.2: a ``Host`` field sent with it is ignored)."""
        content_length: int | None = None
        chunked = False
        expects_continue = False
        hosts = 0
        keep_alive = not http10
        upgrade = False
        unusual = False
        for name, value in fields:
            if name not in _FACT_FIELDS:  # most fields: one set lookup, not six comparisons
                continue
            if name == b"content-length":
                content_length = int(value)
            elif name == b"host":
                check_host(value)
                hosts += 1
            elif name == b"transfer-encoding":
                unusual = unusual or chunked or value.lower() != b"chunked"
                chunked = True
            elif name == b"connection":
                keep_alive = keep_alive and b"close" not in comma_values(value)
            elif name == b"expect":
                expects_continue = expects_continue or (
                    not http10 and b"100-continue" in comma_values(value)
                )
            elif name == b"upgrade":
                upgrade = upgrade or any(comma_values(value))
        if not (hosts or http10):  # h11 requires it of 1.1 only; 1.2+ is read as 1.1
            raise ProtocolError(400, "missing Host header")
        if target[0] != 47:  # not "/": absolute-form
            fields = _with_authority_as_host(fields, target)
        version = "1.0" if http10 else "1.1"
        bodyless = not (content_length or chunked)
        # The tuple made directly: calling the named tuple class runs its Python ``__new__``
        # through the type's slot, twice the cost (3,400 instructions, measured).
        head = _new_tuple(
            RequestHead,
            (
                method,
                target,
                version,
                fields,
                content_length,
                chunked,
                expects_continue,
                None,
                bodyless,
            ),
        )
        self._enter(head, keep_alive, upgrade, unusual or hosts > 1)
        return head

    def _enter(self, head: RequestHead, keep_alive: bool, upgrade: bool, unusual: bool) -> None:
        """Start reading the request ``head`` (its body's bound set up), with the facts
        ``_start_request`` found in it."""
        self._head = head
        self._keep_alive = keep_alive
        self._upgrade_proposed = upgrade
        self._unusual = unusual
        self._body_left = head.content_length or 0
        self._chunked = ChunkedFraming(self.limits) if head.chunked else None
        self.in_body = True


def _with_authority_as_host(
    fields: list[tuple[bytes, bytes]], target: bytes
) -> list[tuple[bytes, bytes]]:
    """``fields`` with the authority of the absolute-form ``target`` as their one ``Host``
    field, first, in place of any the client sent."""
    host = (b"host", absolute_form_authority(target))
    return [host, *(field for field in fields if field[0] != b"host")]


def comma_values(value: bytes) -> list[bytes]:
    """A comma-separated header value as its lower-case, stripped, non-empty elements."""
    return [part for part in (raw.strip() for raw in value.lower().split(b",")) if part]
