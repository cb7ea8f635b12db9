"""``HTTP1Exchange``: one request of an HTTP/1.1 connection as an ``Exchange``, and the byte
stream a WebSocket runs over after a ``101``.

The exchange reads its body through the connection's adapter (with ``100 Continue`` when the
client waits for it), writes through h11, and bounds every write by ``send_timeout`` as a
deadline on its own cancel scope. Whether the response says ``Connection: close`` is decided
when its head is written, from the connection's state and the exchange's own (a broken or
refused body). The exchange reads its connection through ``ConnectionView`` and never changes
it: how the exchange ended (keep the connection, close it, linger, the peer is gone) is the
``Outcome`` its ending methods return, and the connection decides from that.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ..._errors import Error
from ..._http.headers import Header
from ..._protocol.errors import ProtocolError
from ..._protocol.http1_base import NEED_DATA, BodyChunk
from ..body_pace import BodyPace
from ..clock import http_date
from ..exchange import CLOSE, KEEP_ALIVE, LINGER, PEER_GONE, Exchange, ExchangeGone, Outcome
from .error_answer import send_error_answer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..._http.tls import TLSInfo
    from ..._protocol.http1_base import BaseHTTP1Adapter
    from ..._protocol.request_head import RequestHead
    from ..config import Limits, Timeouts
    from ..state import ServingState
    from ..transport import Transport
    from .reader import StreamReader

__all__ = ["ConnectionView", "HTTP1Exchange"]

_CLOSE = (b"connection", b"close")


class ConnectionView(Protocol):
    """What an exchange reads of its HTTP/1.1 connection (``connection.HTTP1Connection``):
    read-only, but for the adapter, the transport and the reader it reads and writes through.
    """

    @property
    def state(self) -> ServingState: ...
    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def stream(self) -> trio.abc.Stream: ...
    @property
    def client(self) -> tuple[str, int] | None: ...
    @property
    def peer(self) -> tuple[str, int] | None: ...
    @property
    def tls(self) -> TLSInfo | None: ...
    @property
    def scheme(self) -> str: ...
    @property
    def adapter(self) -> BaseHTTP1Adapter: ...
    @property
    def transport(self) -> Transport: ...
    @property
    def reader(self) -> StreamReader: ...
    @property
    def requests(self) -> int:
        """The requests the connection has read, this one included."""

    @property
    def peer_gone(self) -> bool:
        """The client closed its side of the connection."""

    @property
    def stop_reason(self) -> str | None:
        """Why the server closes the connection (shutdown, capacity), once it has decided to."""

    async def next_body_event(self, scope: trio.CancelScope, pace: BodyPace, received: int) -> Any:
        """The next body event (see ``HTTP1Connection.next_body_event``)."""


class HTTP1Exchange(Exchange):
    """One request/response of ``connection``, served by ``serve_exchange`` inside ``scope``
    (the connection's own: exchanges come one at a time), with the connection's reader
    reading ahead (``StreamReader.reading_ahead``) until the response is out."""

    #: the body's pace (``body_pace.py``), made the first time the body must be waited for
    pace: BodyPace | None = None

    def __init__(
        self, connection: ConnectionView, head: RequestHead, scope: trio.CancelScope
    ) -> None:
        # (the base's __init__ named: ``super()`` makes an object per call, once per request)
        Exchange.__init__(self, head, connection.client, connection.scheme, connection.tls, scope)
        self.connection = connection
        self.body_received = 0
        self._waiting_for_body = False
        #: what follows the exchange: ``CLOSE`` once its body broke or was refused; decided
        #: (``KEEP_ALIVE``, ``CLOSE``, ``LINGER``) when the response's head is written
        self._ending = KEEP_ALIVE

    # -- the request body -----------------------------------------------------------------------
    async def receive_body(self) -> bytes:
        """The next piece of the body, ``b""`` at its end. A broken body is ``Error`` 400 (the
        connection closes after the answer); a client that stalls longer than
        ``body_timeout``, or falls behind ``min_body_rate``, cancels the exchange, which is
        answered 408. Cancellation: a checkpoint when it must wait."""
        connection = self.connection
        adapter = connection.adapter
        if not adapter.in_body:
            return b""
        if self.head.expects_continue and adapter.they_expect_continue:  # (the field first:
            await self._write(adapter.send_continue())  # the adapter's answer costs more)
        try:
            event = adapter.next_event()
            if event is NEED_DATA:
                self._waiting_for_body = True
                pace = self.pace
                if pace is None:
                    pace = self.pace = BodyPace(connection.timeouts)
                try:
                    event = await connection.next_body_event(self.scope, pace, self.body_received)
                finally:
                    if not self.scope.cancel_called:  # a body timeout: cancel_answer needs it
                        self._waiting_for_body = False
        except ProtocolError as exc:
            if self._ending is KEEP_ALIVE:
                self._ending = CLOSE  # the rest of the body cannot be read
            if connection.peer_gone and connection.timeouts.cancel_on_disconnect:
                await trio.lowlevel.checkpoint()  # the client left: deliver the cancellation
            raise Error(exc.status, exc.message) from None
        if type(event) is not BodyChunk:
            return b""
        self.body_received += len(event.data)
        return event.data

    def take_whole_body(self) -> bytes | None:
        if self.head.expects_continue:  # receive_body sends the 100 Continue it waits for
            return None
        body = self.connection.adapter.take_whole_body()
        if body is not None:
            self.body_received += len(body)
        return body

    # -- the response -----------------------------------------------------------------------------
    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        """The adapter finalises the response (the llhttp adapter's writer caches its
        head)."""
        connection = self.connection
        data = connection.adapter.send_whole(
            self.head.method, status, self._closing(headers), body, http_date()
        )
        connection.reader.reading_ahead = False  # answered: a disconnect cancels nothing now
        self.response_started = True
        # _write, inline: the most common write of all, one coroutine frame less
        try:
            sent = connection.transport.send_now(data)
            if sent < len(data):
                scope = self.scope
                scope.deadline = trio.current_time() + connection.timeouts.send_timeout
                await connection.transport.send_all(data, sent)
                scope.deadline = math.inf
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise ExchangeGone from None
        return self._ending

    async def send_head(self, status: int, headers: list[Header]) -> None:
        data = self.connection.adapter.send_head(status, self._closing(headers))
        self.response_started = True
        await self._write(data)

    async def send_data(self, data: bytes) -> None:
        await self._write(self.connection.adapter.send_data(data))

    async def send_file(self, fd: int, offset: int, length: int) -> None:
        """On plain TCP, ``os.sendfile`` (zero copy) within ``send_timeout`` while it waits
        for the socket; elsewhere (TLS, in-memory) chunks read in a worker thread."""
        connection = self.connection
        transport = connection.transport
        if not transport.can_send_files:
            await super().send_file(fd, offset, length)
            return
        connection.adapter.send_data_elsewhere(length)
        scope = self.scope
        scope.deadline = trio.current_time() + connection.timeouts.send_timeout
        try:
            await transport.send_file(fd, offset, length)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise ExchangeGone from None
        finally:
            scope.deadline = math.inf

    async def send_end(self) -> Outcome:
        await self._write(self.connection.adapter.send_end())
        return self._ending

    async def send_error(self, status: int, message: str) -> Outcome:
        """The standard error answer, with ``Connection: close``: the connection lingers
        after it (the request may still be arriving)."""
        connection = self.connection
        send_body = self.head.method != b"HEAD"
        stream, timeouts = connection.stream, connection.timeouts
        if await send_error_answer(stream, timeouts, status, message, send_body=send_body):
            return LINGER
        return PEER_GONE

    def _closing(self, headers: list[Header]) -> list[Header]:
        """``headers``, with ``Connection: close`` when the connection ends after them: its
        body broke or was refused, the server shuts down, the connection served its last
        request, or the handler left more of the body than can be drained. Decides the
        exchange's ending (lingering when the request is still arriving)."""
        connection = self.connection
        adapter = connection.adapter
        if (
            self._ending is not KEEP_ALIVE
            or connection.state.shutting_down
            or connection.requests >= connection.limits.max_requests_per_connection
            or (adapter.in_body and not self._drainable())
        ):
            self._ending = LINGER if adapter.in_body else CLOSE
            return [*headers, _CLOSE]
        return headers

    def _drainable(self) -> bool:
        """Whether what the handler left of the body may be read and dropped to keep the
        connection (a Content-Length remainder of at most ``max_drain_size``)."""
        head = self.head
        if head.chunked or self.connection.adapter.they_expect_continue:
            return False
        left = (head.content_length or 0) - self.body_received
        return left <= self.connection.limits.max_drain_size

    async def _write(self, data: bytes) -> None:
        """Write within ``send_timeout`` (a deadline on this exchange's scope, set only when
        the write must wait, and cleared after it). ``ExchangeGone`` when the peer is gone.
        Cancellation: a checkpoint before anything is written (a streamed body's chunks also
        let the other tasks run in between)."""
        connection = self.connection
        await trio.lowlevel.checkpoint()
        try:
            sent = connection.transport.send_now(data)
            if sent < len(data):
                scope = self.scope
                scope.deadline = trio.current_time() + connection.timeouts.send_timeout
                await connection.transport.send_all(data, sent)
                scope.deadline = math.inf
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise ExchangeGone from None

    # -- a protocol switch -----------------------------------------------------------------------
    async def upgrade(self, headers: list[Header]) -> trio.abc.Stream:
        connection = self.connection
        data = connection.adapter.send_switch(headers)
        connection.reader.reading_ahead = False  # the session reads the stream itself now
        self.response_started = True
        await self._write(data)
        return _UpgradedStream(connection)

    # -- endings ---------------------------------------------------------------------------------
    @property
    def peer(self) -> tuple[str, int] | None:
        return self.connection.peer

    def cancel_answer(self) -> tuple[int, str] | None:
        connection = self.connection
        if connection.peer_gone or self.response_started:
            return None
        if connection.stop_reason is not None:
            return (503, connection.stop_reason)
        if self._waiting_for_body and self.pace is not None:
            return (408, self.pace.timeout_message)
        return None

    def cancel_cause(self) -> str | None:
        connection = self.connection
        if connection.peer_gone:
            return "disconnect"
        if connection.stop_reason is not None:
            return "shutdown"
        if self._waiting_for_body and self.pace is not None:
            return "body_timeout"
        return None

    def refuse_body(self) -> None:
        if self._ending is KEEP_ALIVE:
            self._ending = CLOSE  # the rest of the body is never read: close after

    def abort(self) -> Outcome:
        return LINGER if self._ending is LINGER else CLOSE


class _UpgradedStream(trio.abc.Stream):
    """The connection's stream after a ``101``: the bytes already received past the request
    come first (the reader hands them over), then whatever the socket brings."""

    def __init__(self, connection: ConnectionView) -> None:
        self._connection = connection
        #: Send what the socket takes without waiting (``Transport.send_now``, bound here: it
        #: is called for every WebSocket frame); returns how many bytes of ``data`` it took.
        #: Not a checkpoint. ``BrokenResourceError`` when the peer is gone.
        self.send_now: Callable[[bytes | bytearray | memoryview], int] = (
            connection.transport.send_now
        )

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._connection.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._connection.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return await self._connection.reader.receive_raw()

    async def aclose(self) -> None:
        await self._connection.stream.aclose()
