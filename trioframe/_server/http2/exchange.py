"""``HTTP2Exchange``: one stream of an HTTP/2 connection as an ``Exchange``, and the byte
channel a WebSocket runs over after an extended CONNECT (RFC 8441).

The request body arrives in the stream's buffer (bounded by the stream's flow-control window,
which reopens only as ``receive_body`` takes from it). Response bytes go out as the peer's
windows allow, queued on the connection's adapter and written by the connection's one writer;
a sender waits while that queue is over its bound. Waits are bounded by ``body_timeout`` and
``send_timeout`` as deadlines on the exchange's own cancel scope: they cancel this stream's
handler only. A stream the client resets cancels its handler (with ``cancel_on_disconnect``).
The exchange reaches its connection through ``ConnectionView`` (the adapter, the writer, the
waits for the output queue and the windows) and never changes the connection's state; the
connection resets a stream whose response did not end, once its task has returned.
"""

from __future__ import annotations

import math
from collections import deque
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol

import h2.exceptions
import trio

from ..._errors import Error, error_body
from ..._http.headers import Header
from ..._protocol.finalize import body_allowed, final_headers
from ..body_pace import BodyPace
from ..clock import http_date
from ..exchange import CLOSE, KEEP_ALIVE, PEER_GONE, Exchange, ExchangeGone, Outcome

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from ..._http.tls import TLSInfo
    from ..._protocol.http2 import HTTP2Adapter
    from ..._protocol.request_head import RequestHead
    from ..config import Timeouts

__all__ = ["UNSERVED", "ConnectionView", "HTTP2Exchange"]

_JSON = (b"content-type", b"application/json")
#: The scope of an exchange until its worker's is set (``workers.py``) and once its worker has
#: moved on: never entered, and nothing reads its state.
UNSERVED = trio.CancelScope()


class ConnectionView(Protocol):
    """What a stream's exchange uses of its HTTP/2 connection (``connection.HTTP2Connection``):
    the adapter it queues frames on, and the connection's writer and waits."""

    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def client(self) -> tuple[str, int] | None: ...
    @property
    def peer(self) -> tuple[str, int] | None: ...
    @property
    def tls(self) -> TLSInfo | None: ...
    @property
    def scheme(self) -> str: ...
    @property
    def adapter(self) -> HTTP2Adapter: ...
    @property
    def output_bound(self) -> int:
        """Queued output past which senders wait."""

    @property
    def stop_reason(self) -> str | None:
        """Why the server closes the connection (shutdown, capacity), once it has decided to."""

    def wake_writer(self) -> None:
        """Let the writer write what is queued."""

    async def until_writable(self, exchange: HTTP2Exchange) -> None:
        """Return once the output queue is back under its bound (see the connection)."""

    def wait_for_window(self, exchange: HTTP2Exchange) -> None:
        """``exchange`` is about to wait for a send window (woken by a WINDOW_UPDATE)."""


class HTTP2Exchange(Exchange):
    """Stream ``stream_id`` of ``connection``, served by ``serve_exchange`` inside ``scope``
    (its own). ``body_ended``: the request came without a body; ``refused``: its head was
    refused (malformed) and it only carries the error answer."""

    #: the body's pace (``body_pace.py``), made the first time the body must be waited for
    pace: BodyPace | None = None
    #: why ``gone`` was set (``cancel_cause``)
    _gone_cause = "disconnect"

    def __init__(
        self,
        connection: ConnectionView,
        stream_id: int,
        head: RequestHead,
        body_ended: bool,
        *,
        refused: bool = False,
    ) -> None:
        super().__init__(head, connection.client, connection.scheme, connection.tls, UNSERVED)
        self.connection = connection
        self.stream_id = stream_id
        self._body: deque[tuple[bytes, int]] = deque()
        #: the window bytes of the body pieces held and not yet read (``_body``)
        self.buffered = 0
        self.body_fed = 0  # body bytes received so far
        self.body_ended = body_ended
        #: the head was refused (malformed): its error answer earns no flood credit
        self.refused = refused
        #: the client reset the stream, or the connection is gone
        self.gone = False
        #: the response has been queued in full
        self.response_ended = False
        self._waiting_for_body = False
        self._wakeup: trio.Event | None = None  # set by body data, a window, a reset

    # -- what the connection's reader feeds --------------------------------------------------
    def feed(self, data: bytes, flow_length: int) -> None:
        if data:
            self._body.append((data, flow_length))
            self.buffered += flow_length
            self.body_fed += len(data)
        elif flow_length:  # padding only: nothing to hand over, the window reopens now
            self.connection.adapter.consumed(self.stream_id, flow_length)
        if self._wakeup is not None:  # (a body fed before its handler waits wakes no one)
            self.wake()

    def feed_end(self) -> None:
        self.body_ended = True
        self.wake()

    def peer_reset(self, *, stream: bool = False) -> None:
        """The client reset the stream (``stream``), or the connection is lost: the handler is
        cancelled (``cancel_on_disconnect``); a WebSocket session sees the end of its stream
        instead and closes as it does on HTTP/1.1."""
        if not self.gone:
            self.gone = True
            self._gone_cause = "stream_reset" if stream else "disconnect"
        if self.connection.timeouts.cancel_on_disconnect and self.websocket is None:
            self.scope.cancel()
        self.wake()

    def cut_off(self) -> None:
        """The connection failed (an error GOAWAY went out): nothing more is written for
        this stream; its handler is cancelled next."""
        if not self.gone:
            self.gone = True
            self._gone_cause = "connection_error"

    def wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    async def _wait(self) -> None:
        self._wakeup = trio.Event()
        await self._wakeup.wait()

    def drop_body(self) -> None:
        """Drop what is buffered of the body (the stream is over): its window reopens."""
        if self.buffered:
            self.connection.adapter.consumed(self.stream_id, self.buffered)
        self._body.clear()
        self.buffered = 0

    def drainable(self, max_drain_size: int) -> bool:
        """Whether the rest of a request body the response did not wait for is small enough
        (a declared remainder of at most ``max_drain_size``) to be read and dropped rather
        than stopped with RST_STREAM(NO_ERROR), which some clients (httpx) report as an
        error instead of returning the response."""
        declared = self.head.content_length
        if declared is None:
            return False
        return declared - self.body_fed <= max_drain_size

    # -- the request body -----------------------------------------------------------------------
    async def receive_body(self) -> bytes:
        """The next piece of the body, ``b""`` at its end. A client that stalls longer than
        ``body_timeout``, or falls behind ``min_body_rate``, cancels the exchange (answered
        408); a reset stream is ``Error`` 400. Cancellation: a checkpoint when it must
        wait."""
        if not self._body:
            if self.body_ended:
                return b""
            self._waiting_for_body = True
            pace = self.pace
            if pace is None:
                pace = self.pace = BodyPace(self.connection.timeouts)
            self.scope.deadline = pace.start_wait(self.body_fed)
            try:
                while self.has_body_waiting:
                    await self._wait()
            finally:
                if not self.scope.cancel_called:  # also when a handler's deadline ends the wait
                    self.scope.deadline = math.inf
                    pace.end_wait()
                    self._waiting_for_body = False
            if not self._body:
                if self.gone:
                    raise Error(400, "the client reset the stream")
                return b""
        return self.take_piece()

    def take_whole_body(self) -> bytes | None:
        if not self.body_ended:
            return None
        if len(self._body) == 1:  # (the usual: one piece)
            return self.take_piece()
        return b"".join([self.take_piece() for _ in range(len(self._body))])

    def take_piece(self) -> bytes:
        """Hand over the oldest buffered piece of body (there is one): its window reopens
        and it counts as work read by the handler."""
        data, flow_length = self._body.popleft()
        self.buffered -= flow_length
        if self.connection.adapter.consumed(self.stream_id, flow_length, read=True):
            self.connection.wake_writer()  # (a WINDOW_UPDATE)
        return data

    @property
    def has_body_waiting(self) -> bool:
        """Whether a reader would have to wait: no piece buffered, and the body neither
        ended nor reset."""
        return not self._body and not self.body_ended and not self.gone

    # -- the response ---------------------------------------------------------------------------
    def send_whole(
        self, status: int, headers: list[Header], body: bytes
    ) -> Coroutine[Any, Any, Outcome]:
        # (not a coroutine itself: the one ``send_response`` makes is awaited, a frame fewer)
        return self.send_response(
            status,
            final_headers(headers, status, len(body), http_date()),
            body if body_allowed(self.head.method, status) else b"",
        )

    async def send_response(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        """Write a whole response whose ``headers`` are final already (``send_whole``, the
        error answers); the exchange's outcome. ``ExchangeGone`` when the stream is gone."""
        if self.gone:
            raise ExchangeGone
        self.response_started = True
        adapter, stream_id = self.connection.adapter, self.stream_id
        try:
            # The common case: the windows take the whole body now, one step.
            whole = adapter.send_response(stream_id, status, headers, body, earned=not self.refused)
            if not whole:
                adapter.send_headers(stream_id, status, headers, end=not body)
        except h2.exceptions.ProtocolError:
            raise ExchangeGone from None
        if whole:  # (the adapter counted it done)
            self.response_ended = True
            self.connection.wake_writer()
        elif not body:
            self._ended()
        else:
            await self._send(body, end=True)
        connection = self.connection
        if adapter.pending > connection.output_bound:
            await connection.until_writable(self)
        return KEEP_ALIVE

    async def send_head(self, status: int, headers: list[Header]) -> None:
        self._check_open()
        self.response_started = True
        try:
            self.connection.adapter.send_headers(self.stream_id, status, headers, end=False)
        except h2.exceptions.ProtocolError:
            raise ExchangeGone from None
        self.connection.wake_writer()

    async def send_data(self, data: bytes) -> None:
        await self._send(data, end=False)
        await self.connection.until_writable(self)
        self.scope.deadline = math.inf  # the next chunk may take any time

    async def send_end(self) -> Outcome:
        self._check_open()
        try:
            self.connection.adapter.end_stream(self.stream_id)
        except h2.exceptions.ProtocolError:
            raise ExchangeGone from None
        self._ended()
        return KEEP_ALIVE

    async def send_error(self, status: int, message: str) -> Outcome:
        if self.gone or self.response_started:
            return self.abort()
        headers = [_JSON, (b"date", http_date())]
        body = error_body(status, message)
        headers.append((b"content-length", b"%d" % len(body)))
        if self.head.method == b"HEAD":  # the length is said, the body never sent
            body = b""
        with trio.move_on_after(self.connection.timeouts.send_timeout), suppress(ExchangeGone):
            return await self.send_response(status, headers, body)
        return self.abort()

    async def _send(self, data: bytes, *, end: bool) -> None:
        """Queue ``data`` as DATA frames as the windows open (``end``: the last one ends the
        stream), within ``send_timeout`` for each wait."""
        adapter = self.connection.adapter
        view = memoryview(data)
        timeout = self.connection.timeouts.send_timeout
        while True:
            self._check_open()
            window = adapter.send_window(self.stream_id)
            if window <= 0 and view:
                self.connection.wake_writer()  # what is queued (the head) goes out meanwhile
                self.scope.deadline = trio.current_time() + timeout
                self.connection.wait_for_window(self)
                await self._wait()
                continue
            piece, view = view[:window], view[window:]
            last = end and not view
            try:
                adapter.send_data(self.stream_id, piece, end=last, earned=not self.refused)
            except h2.exceptions.ProtocolError:
                raise ExchangeGone from None
            self.connection.wake_writer()
            if not view:
                break
            if adapter.pending > self.connection.output_bound:
                await self.connection.until_writable(self)
        if end:
            self._ended()

    def _check_open(self) -> None:
        if self.gone:
            raise ExchangeGone

    def _ended(self) -> None:
        self.response_ended = True
        self.connection.adapter.response_done(earned=not self.refused)
        self.connection.wake_writer()

    # -- a protocol switch (RFC 8441) ----------------------------------------------------------
    async def upgrade(self, headers: list[Header]) -> trio.abc.Stream:
        """Answer the extended CONNECT with ``200`` and ``headers``; the stream's DATA frames
        carry the new protocol from here on."""
        await self.send_head(200, headers)
        self.scope.deadline = math.inf
        return _StreamChannel(self)

    # -- endings ---------------------------------------------------------------------------------
    @property
    def peer(self) -> tuple[str, int] | None:
        return self.connection.peer

    def cancel_answer(self) -> tuple[int, str] | None:
        if self.gone or self.response_started:
            return None
        if self.connection.stop_reason is not None:
            return (503, self.connection.stop_reason)
        if self._waiting_for_body and self.pace is not None:
            return (408, self.pace.timeout_message)
        return None

    def cancel_cause(self) -> str | None:
        if self.gone:
            return self._gone_cause
        if self.connection.stop_reason is not None:
            return "shutdown"
        if self._waiting_for_body and self.pace is not None:
            return "body_timeout"
        return None

    def refuse_body(self) -> None:
        pass  # the rest of the body is reset away when the exchange ends (RST_STREAM NO_ERROR)

    def abort(self) -> Outcome:
        # (a stream whose response did not end is reset once its task returns: connection)
        return PEER_GONE if self.gone else CLOSE


class _StreamChannel(trio.abc.Stream):
    """A stream's DATA frames as a byte stream, for a WebSocket over HTTP/2. Waits have no
    deadline of their own (the WebSocket session bounds its writes); a reset stream is
    ``trio.BrokenResourceError`` to a sender, the end of the stream to a reader."""

    def __init__(self, exchange: HTTP2Exchange) -> None:
        self._exchange = exchange

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        exchange = self._exchange
        try:
            await exchange._send(bytes(data), end=False)
            await exchange.connection.until_writable(exchange)
        except ExchangeGone:
            raise trio.BrokenResourceError("the stream was reset") from None
        finally:
            exchange.scope.deadline = math.inf

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        exchange = self._exchange
        while exchange.has_body_waiting:
            await exchange._wait()
        if not exchange._body:
            await trio.lowlevel.checkpoint()
            return b""
        return exchange.take_piece()

    async def aclose(self) -> None:
        exchange = self._exchange
        if not exchange.gone and not exchange.response_ended:
            try:
                exchange.connection.adapter.end_stream(exchange.stream_id)
                exchange._ended()
            except h2.exceptions.ProtocolError:
                pass
        await trio.lowlevel.checkpoint()
