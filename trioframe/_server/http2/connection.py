"""One HTTP/2 connection: its own nursery, one reader, one writer, a worker task per stream.

::

    HTTP2Connection.run
    ├── (run itself) the reader: bytes → HTTP2Adapter → events → the streams
    ├── writer       everything queued on the adapter, in one write per wake-up
    ├── worker       serve_exchange(HTTP2Exchange) for one stream at a time (workers.py)
    ├── worker       ...
    └── goaway       graceful shutdown's second GOAWAY, after a PING round trip

Each stream's handler runs in a worker task, in a cancel scope that is the stream's while
the worker serves it: a reset stream, a body or send timeout cancels that handler alone; a
lost connection cancels them all. Streams count against ``max_concurrent_streams`` until
their handler has returned (a stream reset by the client whose handler is still unwinding
still counts), so opening and resetting streams at once cannot start unbounded work
(CVE-2023-44487); the extra streams are refused with REFUSED_STREAM.

The reader stops reading while the output queue is over its bound (a client that does not
read cannot make the server queue PING and SETTINGS answers without limit) and the writer
gives up on a write that takes longer than ``send_timeout``. Connection-level deadlines:
``header_timeout`` for the preface and for a header block in CONTINUATION frames,
``keep_alive_timeout`` while no stream is open; then, too, the connection limit may close it
with GOAWAY (``evict``, ``slots.py``). Shutdown sends GOAWAY twice (RFC 9113
section 6.8): first with the highest possible stream id, then, a PING round trip later, with
the last stream actually received; the streams in flight finish, then the connection closes.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import trio
from h2.errors import ErrorCodes

from ..._protocol.http2 import LAST_STREAM_ID, ConnectionFailed, HTTP2Adapter
from ..._protocol.http2_events import (
    BodyEnded,
    BodyReceived,
    PeerClosed,
    PingAcked,
    RequestRefused,
    RequestStarted,
    StreamReset,
    WindowOpened,
)
from ..._protocol.request_head import RequestHead
from ..address import format_peer
from ..slots import Evictable, Rank, unread_input
from .exchange import HTTP2Exchange
from .limits import limits_from
from .measured import error_goaway, stream_serving
from .output import Output
from .workers import StreamWorkers

if TYPE_CHECKING:
    from ..._http.tls import TLSInfo
    from ..state import ServingState

__all__ = ["HTTP2Connection"]

log = logging.getLogger("trioframe")

RECEIVE_SIZE = 64 * 1024
#: How long graceful shutdown waits for the PING between its two GOAWAY frames.
GOAWAY_ROUND_TRIP = 1.0
_SHUTDOWN_PING = b"goaway\x00\x00"


class HTTP2Connection:
    """Serve HTTP/2 on ``stream`` (after the TLS handshake when there is one); ``initial``
    is what was read before the protocol was chosen (the preface, on cleartext). ``await
    run()`` returns when the connection is closed; cancelling it closes it at once. A
    ``ServedConnection``."""

    protocol = "h2"  # (as metrics name it)

    # No instance dict: past 30 attributes CPython gives each instance a dict of its own
    # (1.5 KiB), where slots take 8 bytes each. A new attribute must be named here.
    __slots__ = (
        *("_header_block_since", "_initial", "_new_exchange", "_no_streams", "_nursery"),
        *("_peer_closed", "_ping_acked", "_read_scope", "_serve", "_shutdown_started"),
        *("_window_waiters", "active", "adapter", "client", "exchanges", "idle_since"),
        *("_waiting", "limits", "options", "output", "output_bound", "peer", "peer_gone"),
        *("scheme", "state", "stop_reason", "stream", "timeouts", "tls", "wake_writer", "workers"),
    )

    def __init__(
        self,
        state: ServingState,
        stream: trio.abc.Stream,
        client: tuple[str, int] | None,
        tls: TLSInfo | None = None,
        initial: bytes = b"",
    ) -> None:
        self.state = state
        config = state.config
        self.timeouts, self.limits = config.timeouts, config.limits
        self.options = config.http2_options
        self.stream = stream
        self.client = client
        #: the address the connection came from (``client``: a PROXY header may name another)
        self.peer = client
        self.tls = tls
        self.scheme = "http" if tls is None else "https"
        self.adapter = HTTP2Adapter(limits_from(config))
        #: queued output past which senders wait and the reader stops reading
        self.output = Output(self.adapter, self.options.http2_max_output_buffer)
        self.output_bound = self.output.bound
        self.wake_writer = self.output.wake  # (let the writer write what is queued)
        self._initial = initial
        self.exchanges: dict[int, HTTP2Exchange] = {}
        self.active = 0  # stream tasks alive (a reset stream counts until its task returns)
        self.idle_since = trio.current_time()
        #: why the server closes this connection (shutdown, capacity), once it has decided to
        self.stop_reason: str | None = None
        self.peer_gone = False
        self._nursery: trio.Nursery | None = None
        self._read_scope = trio.CancelScope()
        #: exchanges waiting for a send window (a dict as a set: empty, 64 bytes, not 216)
        self._window_waiters: dict[HTTP2Exchange, None] = {}
        self._no_streams: trio.Event | None = None  # set when the last stream ends
        self._ping_acked: trio.Event | None = None  # the shutdown PING's (sent with it)
        self._shutdown_started = False
        self._peer_closed = False  # the client sent GOAWAY: nothing more is read
        self._header_block_since: float | None = None
        self._waiting = False  # the reader waits for the client's next bytes
        self._new_exchange, self._serve = stream_serving(state)  # (measured with metrics)
        self.workers = StreamWorkers(self._serve, state, self._stream_done)

    # -- lifetime (the ServedConnection interface) ------------------------------------------
    async def run(self) -> None:
        """Serve the connection, then close the stream (also when cancelled)."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                try:
                    nursery.start_soon(self._write_loop)
                    await self._read_loop()
                    if not self.peer_gone:
                        await self._wait_streams()
                        await self._flush()
                    nursery.cancel_scope.cancel()
                finally:  # closed to new tasks from here: a late shutdown has nothing to do
                    self._nursery = None
        finally:
            self._lost()
            await trio.aclose_forcefully(self.stream)

    @property
    def evictable(self) -> Evictable | None:
        """Evictable while no stream is in progress (a header block may be arriving: its
        stream has not started) and nothing read waits to be handled, since the last stream
        ended; not once it is being closed."""
        if self.active or self.stop_reason is not None or self.peer_gone or self.adapter.backlog:
            return None
        return Evictable(Rank.WAITING, self.idle_since, "idle")

    def begin_shutdown(self) -> None:
        """Graceful shutdown: GOAWAY (the highest stream id) and a PING now; GOAWAY with
        the last stream received after the PING's answer (at most ``GOAWAY_ROUND_TRIP``);
        the streams in flight finish; WebSockets close with 1001."""
        if self._shutdown_started or self._nursery is None:
            return
        self._shutdown_started = True
        self.adapter.send_goaway(LAST_STREAM_ID)
        self._ping_acked = trio.Event()
        self.adapter.ping(_SHUTDOWN_PING)
        self.wake_writer()
        self._nursery.start_soon(self._second_goaway)
        for exchange in self.exchanges.values():
            if exchange.websocket is not None:
                exchange.websocket.begin_shutdown()

    def evict(self, reason: str) -> bool:
        """Close now to make room (GOAWAY with the last stream received: the client retries
        later ones elsewhere) if no stream is in progress and no bytes wait unread in its
        socket; returns whether it did."""
        if self.evictable is None or unread_input(self.stream):
            return False
        self.stop_reason = reason
        self.adapter.send_goaway(self.adapter.last_stream_id)
        self._read_scope.cancel()
        return True

    def cancel_for_shutdown(self) -> None:
        """The grace period is over: cancel every stream (one whose response has not started
        is answered 503), then close."""
        self.stop_reason = "the server is shutting down"
        self.adapter.send_goaway(self.adapter.last_stream_id)
        for exchange in list(self.exchanges.values()):
            exchange.scope.cancel()
        self._read_scope.cancel()

    async def _second_goaway(self) -> None:
        assert self._ping_acked is not None
        with trio.move_on_after(GOAWAY_ROUND_TRIP):
            await self._ping_acked.wait()
        self.adapter.send_goaway(self.adapter.last_stream_id)
        self.wake_writer()
        if self.active == 0:
            self._read_scope.cancel()

    # -- reading ----------------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        """Read, and hand what was read to the streams one slice at a time (at most
        ``http2_max_frames_per_step`` frames): other tasks run between two slices, and the
        streams a slice opens past ``max_concurrent_streams`` are refused before the next."""
        adapter, scope = self.adapter, self._read_scope
        data: bytes | bytearray = self._initial
        with scope:
            while True:
                try:
                    if data:
                        adapter.feed(data)
                    events = adapter.receive() if adapter.backlog else []
                except ConnectionFailed as exc:
                    log.debug("HTTP/2 connection from %s ends: %s", self._peer(), exc)
                    error_goaway(self.state, exc.reason)
                    return
                for event in events:
                    self._dispatch(event)
                self.wake_writer()
                if self._peer_closed:
                    return
                if self.adapter.goaway_last_id is not None and self.active == 0:
                    return  # a final GOAWAY went out and every stream is over
                while self.output.over_bound and not self.peer_gone:
                    await self.output.park()  # the writer drains it or gives up
                if self.peer_gone:
                    return
                data = b""
                if adapter.backlog:
                    await trio.lowlevel.checkpoint()  # the rest of the read after others ran
                    continue
                if not self.active:
                    self.state.slot_evictable()
                self._waiting = True
                self._arm_read_deadline()
                try:
                    data = await self.stream.receive_some(RECEIVE_SIZE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                self._waiting = False
                if not data:
                    self._lost()
                    return
                if scope.deadline != math.inf:  # the deadlines are for waiting only
                    scope.deadline = math.inf
        if (
            self._read_scope.cancelled_caught
            and self.stop_reason is None
            and adapter.goaway_last_id is None
            and not self.peer_gone
        ):  # a deadline: the connection was idle too long, or a header block too slow
            slow = adapter.meter.in_header_block
            log.debug(
                "HTTP/2 connection from %s: %s",
                self._peer(),
                "header block timed out" if slow else "idle",
            )
            adapter.send_goaway(
                adapter.last_stream_id, ErrorCodes.PROTOCOL_ERROR if slow else ErrorCodes.NO_ERROR
            )
            if slow:
                error_goaway(self.state, "slow_header_block")

    def _arm_read_deadline(self) -> None:
        """Set when the connection gives up waiting for the client: the preface and settings
        within ``header_timeout``; a header block within ``header_timeout`` of its first
        frame; ``keep_alive_timeout`` after the last stream while none is open. Called as the
        reader starts waiting, and when the last stream ends while it waits."""
        timeouts = self.timeouts
        if self.adapter.meter.in_header_block:
            if self._header_block_since is None:
                self._header_block_since = trio.current_time()
            deadline = self._header_block_since + timeouts.header_timeout
        else:
            self._header_block_since = None
            if self.active:
                deadline = math.inf
            elif self.adapter.requests == 0:  # (no stream has ended: idle since it opened)
                deadline = self.idle_since + timeouts.header_timeout
            else:
                deadline = self.idle_since + timeouts.keep_alive_timeout
        if self._read_scope.deadline != deadline:
            self._read_scope.deadline = deadline

    def _dispatch(self, event: object) -> None:
        if isinstance(event, BodyReceived):
            exchange = self.exchanges.get(event.stream_id)
            if exchange is None:  # a stream already over: its window reopens at once
                self.adapter.consumed(event.stream_id, event.flow_length)
            else:
                exchange.feed(event.data, event.flow_length)
        elif isinstance(event, RequestStarted):
            self._start(event.stream_id, event.head, event.ended, None, event.body)
        elif isinstance(event, BodyEnded):
            exchange = self.exchanges.get(event.stream_id)
            if exchange is not None:
                exchange.feed_end()
        elif isinstance(event, WindowOpened):
            self._window_opened(event.stream_id)
        elif isinstance(event, StreamReset):
            exchange = self.exchanges.get(event.stream_id)
            if exchange is not None:
                exchange.peer_reset(stream=True)
        elif isinstance(event, RequestRefused):
            head = RequestHead(event.method, b"/", "2", [], None)
            self._start(event.stream_id, head, True, (event.status, event.message))
        elif isinstance(event, PingAcked):
            if event.data == _SHUTDOWN_PING and self._ping_acked is not None:
                self._ping_acked.set()
        elif isinstance(event, PeerClosed):
            # h2 sends nothing for a stream after the client's GOAWAY: every stream ends as if
            # reset, and reading stops; what is already queued (this connection's SETTINGS
            # and acknowledgements) still goes out before the connection closes.
            for exchange in self.exchanges.values():
                exchange.peer_reset()
            self._peer_closed = True

    def _start(
        self,
        stream_id: int,
        head: RequestHead,
        ended: bool,
        refusal: tuple[int, str] | None,
        body: tuple[bytes, int] | None = None,
    ) -> None:
        if self.active >= self.options.max_concurrent_streams:
            self.adapter.refuse(stream_id)
            if body is not None:  # (its window reopens at once)
                self.adapter.consumed(stream_id, body[1])
            return
        if refusal is not None:
            self.adapter.meter.charge()
        exchange = self._new_exchange(self, stream_id, head, ended, refused=refusal is not None)
        if body is not None:
            exchange.feed(*body)
        self.exchanges[stream_id] = exchange
        self.active += 1
        assert self._nursery is not None
        if refusal is None:
            self.workers.start(self._nursery, exchange, self.active)
        else:
            self.workers.refuse(self._nursery, exchange, refusal)

    def _stream_done(self, exchange: HTTP2Exchange) -> None:
        """A stream's task has returned: reset it if its response did not end (or its
        request body is still coming), drop what is left of its body."""
        stream_id = exchange.stream_id
        del self.exchanges[stream_id]
        self._window_waiters.pop(exchange, None)
        self.active -= 1
        adapter = self.adapter
        whole = exchange.response_ended and exchange.body_ended and not exchange.buffered
        if not (self.peer_gone or whole):  # (whole, the usual: nothing to reset or hand back)
            if not exchange.response_ended:  # aborted, or the client reset it
                cancelled = exchange.gone or exchange.scope.cancel_called
                code = ErrorCodes.CANCEL if cancelled else ErrorCodes.INTERNAL_ERROR
                adapter.reset(stream_id, code, charge=False)
            elif adapter.remote_open(stream_id) and not exchange.drainable(
                self.limits.max_drain_size
            ):
                adapter.reset(stream_id, ErrorCodes.NO_ERROR, charge=False)  # RFC 9113 8.1
            exchange.drop_body()
            self.wake_writer()
        if self.active == 0:
            self.idle_since = trio.current_time()
            if self._waiting:  # the keep-alive wait starts now
                self._arm_read_deadline()
            adapter.forget_closed_streams()
            self.state.slot_evictable()
            if self.adapter.goaway_last_id is not None:
                self._read_scope.cancel()  # draining after a final GOAWAY: done
            if self._no_streams is not None:
                self._no_streams.set()

    def _window_opened(self, stream_id: int) -> None:
        if stream_id == 0:
            waiters, self._window_waiters = self._window_waiters, {}
            for exchange in waiters:
                exchange.wake()
            return
        waiting = self.exchanges.get(stream_id)
        if waiting is not None and waiting in self._window_waiters:
            del self._window_waiters[waiting]
            waiting.wake()

    def wait_for_window(self, exchange: HTTP2Exchange) -> None:
        """``exchange`` is about to wait for a send window (woken by a WINDOW_UPDATE)."""
        self._window_waiters[exchange] = None

    def _lost(self) -> None:
        """The peer is gone: every stream's handler is cancelled (``cancel_on_disconnect``),
        every wait ends."""
        if self.peer_gone:
            return
        self.peer_gone = True
        for exchange in self.exchanges.values():
            exchange.peer_reset()
        self.output.release()
        self._read_scope.cancel()

    # -- writing ------------------------------------------------------------------------------------
    async def until_writable(self, exchange: HTTP2Exchange) -> None:
        """Return once the output queue is back under its bound (within ``send_timeout``, a
        deadline on the exchange's scope). Raises ``ExchangeGone`` for a lost connection."""
        if not self.output.over_bound:
            return
        exchange.scope.deadline = trio.current_time() + self.timeouts.send_timeout
        while self.output.over_bound and not self.peer_gone:
            await self.output.park()

    async def _write_loop(self) -> None:
        """The writer (``Output.write_all``); a write that fails or takes longer than
        ``send_timeout`` loses the connection."""
        await self.output.write_all(self.stream, self.timeouts.send_timeout)
        if not self.peer_gone:
            log.debug("HTTP/2 connection to %s: a write failed or timed out", self._peer())
        self._lost()

    async def _flush(self) -> None:
        """Let the writer write what is still queued (the last GOAWAY), within
        ``send_timeout``."""
        with trio.move_on_after(self.timeouts.send_timeout):
            while not self.peer_gone and (self.adapter.pending or self.output.writing):
                self.wake_writer()
                await self.output.park()

    async def _wait_streams(self) -> None:
        """Reading is over: cancel the streams still in progress (they answer what they still
        can: 503 at shutdown) unless a graceful GOAWAY let them finish, and wait for them.
        After an error GOAWAY nothing more is written for them."""
        if self.active and self.adapter.closed:
            for exchange in self.exchanges.values():
                exchange.cut_off()
        for exchange in list(self.exchanges.values()):
            exchange.scope.cancel()
        while self.active:
            self._no_streams = trio.Event()
            await self._no_streams.wait()

    def _peer(self) -> str:
        return format_peer(self.client)
