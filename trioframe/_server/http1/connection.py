"""One HTTP/1.1 connection: its own nursery, the request loop, and the connection-level
deadlines; each request is served as an ``HTTP1Exchange`` (``exchange.py``) through
``serve_exchange``, whose ``Outcome`` decides whether the connection serves another request,
closes, or lingers before closing (the exchange never changes the connection's state).

One cancel scope carries every deadline of the connection, moved as the phase changes: the
idle wait (``keep_alive_timeout``, or ``header_timeout`` for a new connection), the head
(``header_timeout``), draining a body the handler left unread (``body_timeout`` and
``min_body_rate``: ``body_pace.py``), and, while an exchange runs, that exchange's body and
send deadlines: exchanges come one at a time, so
the connection's scope is also the exchange's (a cancel scope per request would cost more than
the rest of the exchange machinery together). When it fires the connection ends, and what is
answered first depends on where it was: the exchange's ``answer_cancelled`` (408 for a body,
503 at shutdown, nothing once the response started), or, between exchanges, nothing when idle,
408 for a head, 503 when the server closed the connection on a partial head or as a request
arrived (shutdown, or the connection limit).

While it waits for its client (for a request, for the rest of a head, or lingering after an
error answer) the connection limit may close it to make room (``evict``; the policy is in
``slots.py``); a new connection is not waiting until it has looked at what arrived first.

One task reads at a time (``reader.StreamReader``). Between requests the request loop reads
the stream itself. While a handler runs, a watcher task takes over reading as soon as the
handler yields, so a client that goes away is noticed and, with ``cancel_on_disconnect``,
that exchange's handler is cancelled. The watcher is started the first time an exchange
blocks and then kept for the connection: a connection whose handlers never block has no
second task at all, neither while serving nor while it waits for its next request.
"""

from __future__ import annotations

import contextvars
import enum
import math
from typing import TYPE_CHECKING, Any

import trio

from ..._protocol.errors import ProtocolError
from ..._protocol.http1_base import CLOSED, NEED_DATA, BodyChunk
from ..._protocol.request_head import RequestHead
from ..body_pace import BodyPace
from ..exchange import KEEP_ALIVE, LINGER, PEER_GONE, Outcome, answer_cancelled, serve_exchange
from ..isolation import in_context
from ..measure import serve_measured
from ..slots import Evictable, Rank, unread_input
from ..transport import Transport
from .error_answer import send_error_answer
from .exchange import HTTP1Exchange
from .measured import MeasuredHTTP1Exchange
from .reader import StreamReader, linger_close

if TYPE_CHECKING:
    from ..._http.tls import TLSInfo
    from ..state import ServingState

__all__ = ["HTTP1Connection"]

LINGER_SECONDS = 1.0  # after an error answer, how long unread input is drained before close
#: At shutdown, how long a connection accepted just before, with no request yet, waits for its
#: first one (its client sends it as soon as it has connected; a preconnect sends nothing)
FIRST_REQUEST_GRACE = 1.0


class Phase(enum.Enum):
    """Where a connection is between exchanges; decides what a fired deadline means, and
    whether the connection limit may evict it (``IDLE``, ``HEAD`` and ``LINGER``)."""

    START = "looking at what has arrived on a new connection"
    IDLE = "waiting for a request"
    HEAD = "reading a request head"
    EXCHANGE = "serving a request"
    DRAIN = "reading what a handler left of the body"
    LINGER = "answered; reading what the client still sends before closing"


# The phases as module names (see ``exchange.KEEP_ALIVE``: an Enum member read through its
# class costs about 940 instructions on CPython 3.11, a global about 40; a request moves
# through three phases).
_START, _IDLE, _HEAD, _EXCHANGE, _DRAIN, _LINGER = Phase


class HTTP1Connection:
    """Serve HTTP/1.1 requests on ``stream`` until the peer leaves, a limit ends the
    connection, or the server shuts down. ``initial`` is what was read from the stream before
    (to choose the protocol). ``await run()`` returns when the connection is closed;
    cancelling it closes the connection at once. A ``ServedConnection``."""

    __slots__ = (
        *("_answered", "_exchange", "_linger_scope", "_scope", "adapter", "client", "evicted"),
        *("limits", "linger", "peer", "peer_gone", "phase", "reader", "requests", "scheme"),
        *("state", "stop_reason", "stream", "timeouts", "tls", "transport", "waiting_since"),
    )

    protocol = "http/1.1"  # (as metrics name it)

    def __init__(
        self,
        state: ServingState,
        stream: trio.abc.Stream,
        client: tuple[str, int] | None,
        tls: TLSInfo | None = None,
        initial: bytes = b"",
    ) -> None:
        self.state = state
        self.timeouts = state.config.timeouts
        self.limits = state.config.limits
        self.stream = stream
        self.client = client
        #: the address the connection came from (``client``: a PROXY header may name another)
        self.peer = client
        self.tls = tls
        self.scheme = "http" if tls is None else "https"
        self.adapter = state.http1_adapter(state.head_limits)
        if initial:
            self.adapter.receive_data(initial)
        self.phase = _START
        #: the connection's one cancel scope: its nursery's, from ``run`` on
        self._scope: trio.CancelScope
        self.transport = Transport(stream)
        self.reader = StreamReader(self.transport, self.adapter, self._on_peer_gone)
        self.peer_gone = False
        #: why the server closes this connection (shutdown, capacity), once it has decided to
        self.stop_reason: str | None = None
        #: when the connection began its current wait for the client: for a request (idle),
        #: for the rest of a head, or lingering (``trio.current_time()``)
        self.waiting_since = 0.0
        #: the connection limit closed it to make room (see ``slots.py``)
        self.evicted = False
        self._linger_scope: trio.CancelScope | None = None
        #: drain unread input briefly before closing (see ``reader.linger_close``)
        self.linger = False
        self.requests = 0
        self._answered = False  # the request of the current cycle has had its answer
        self._exchange: HTTP1Exchange | None = None

    # -- lifetime (the ServedConnection interface) ------------------------------------------
    async def run(self) -> None:
        """Serve the connection, then close the stream (also when cancelled)."""
        try:
            failed: ProtocolError | None = None
            loop_ended = False
            async with trio.open_nursery() as nursery:
                # The nursery's scope is the connection's (cancelling it ends the watcher
                # too): no scope of its own to hold while it waits.
                self._scope = nursery.cancel_scope
                self.reader.watcher_nursery = nursery  # the watcher starts once needed
                try:
                    await self._request_loop()
                except ProtocolError as exc:
                    failed = exc
                loop_ended = True
                self.reader.stop_watching()  # (cancels the nursery, if a watcher runs)
            if failed is not None:
                # Not answered: not an HTTP peer, or a request answered already (a broken
                # drain after it).
                if failed.answer and not self._answered:
                    await self._send_error_answer(failed.status, failed.message)
            elif not loop_ended:  # the scope was cancelled: a deadline, eviction, shutdown
                exchange, self._exchange = self._exchange, None
                if exchange is not None:  # cancelled under an exchange: it answers (or ends)
                    self._exchange_ended(await answer_cancelled(exchange))
                elif (answer := self._answer_for_cancelled_phase()) is not None:
                    await self._send_error_answer(*answer)
            self.transport.close()
            if self.linger and not self.peer_gone:
                await self._linger()
        finally:
            self.transport.close()
            await trio.aclose_forcefully(self.stream)

    async def _linger(self) -> None:
        """Drain unread input for up to ``LINGER_SECONDS`` before closing (see
        ``reader.linger_close``); a client waiting for a slot cuts it short."""
        self.phase = _LINGER
        self.waiting_since = now = trio.current_time()
        scope = self._linger_scope = trio.CancelScope(deadline=now + LINGER_SECONDS)
        self.state.slot_evictable()
        with scope:
            await linger_close(self.stream)

    @property
    def is_idle(self) -> bool:
        """True while the connection waits for a request (no byte of it read yet)."""
        return self.phase is _IDLE

    @property
    def evictable(self) -> Evictable | None:
        """Evictable while it waits for a request or for the rest of a head (unless it is
        being closed already), and while it lingers after its last answer."""
        phase = self.phase
        if phase is _LINGER:
            scope = self._linger_scope
            if scope is None or scope.cancel_called:
                return None
            return Evictable(Rank.LINGERING, self.waiting_since, "lingering")
        if (phase is _IDLE or phase is _HEAD) and self.stop_reason is None:
            return Evictable(Rank.WAITING, self.waiting_since, "idle" if phase is _IDLE else "head")
        return None

    def evict(self, reason: str) -> bool:
        """Close to make room: a lingering connection at once; one waiting for a request or
        a head unless bytes wait unread in its socket (then it serves them, and this returns
        False). A partial head is answered 503 with ``reason``; so is a request that arrives
        just as the connection is closed."""
        if self.evictable is None:
            return False
        if self.phase is _LINGER:
            assert self._linger_scope is not None
            self._linger_scope.cancel()
            return True
        if unread_input(self.stream):
            return False
        self.evicted = True
        self.stop_reason = reason
        self._scope.cancel()
        return True

    def begin_shutdown(self) -> None:
        """Graceful shutdown: an idle connection closes now, except one still waiting for its
        first request, which it gets ``FIRST_REQUEST_GRACE`` seconds to send; a busy one
        closes after its response (which says ``Connection: close``); a WebSocket session
        closes with 1001."""
        if self.requests == 0 and self.phase is _IDLE:
            grace = trio.current_time() + FIRST_REQUEST_GRACE
            self._scope.deadline = min(self._scope.deadline, grace)
            return
        if self.close_if_idle("the server is shutting down"):
            return
        exchange = self._exchange
        if exchange is not None and exchange.websocket is not None:
            exchange.websocket.begin_shutdown()

    def close_if_idle(self, reason: str) -> bool:
        """Close the connection now if it is waiting for a request; returns whether it was.
        A request whose bytes arrive in that very moment is refused with 503 and ``reason``
        before its handler runs, never run and left unanswered."""
        if self.phase is not _IDLE:
            return False
        self.stop_reason = reason
        self._scope.cancel()
        return True

    def cancel_for_shutdown(self) -> None:
        """The grace period is over: cancel whatever runs (a request whose response has not
        started gets a 503)."""
        self.stop_reason = "the server is shutting down"
        self._scope.cancel()

    # -- reading --------------------------------------------------------------------------------
    def _on_peer_gone(self) -> None:
        self.peer_gone = True
        if self.reader.reading_ahead and self.timeouts.cancel_on_disconnect:
            self._scope.cancel()  # the exchange's handler runs: cancelled

    async def next_body_event(self, scope: trio.CancelScope, pace: BodyPace, received: int) -> Any:
        """The next body event, ``received`` bytes of the body in, waiting for bytes as long
        as ``pace`` allows (``body_timeout``, ``min_body_rate``: a deadline on ``scope``, set
        only when it must wait, and left in place when it fires)."""
        adapter = self.adapter
        reader = self.reader
        while (event := adapter.next_event()) is NEED_DATA:
            if reader.read_now():
                continue
            scope.deadline = pace.start_wait(received)
            try:
                await reader.fill()
            finally:
                if not scope.cancel_called:  # also when a handler's deadline cancels the wait
                    scope.deadline = math.inf
                    pace.end_wait()
        return event

    # -- the request loop ---------------------------------------------------------------------
    async def _send_error_answer(self, status: int, message: str) -> None:
        """``send_error``, then linger (see below)."""
        # An evicted connection's slot is wanted now: it lingers only for a request that
        # arrived as it was closed (closing would reset the answer away).
        self.linger = not self.evicted or unread_input(self.stream)
        observer = self.state.app.observer
        if observer is not None and status == 503 and self.state.shutting_down:
            observer.refused_at_shutdown()
        await self.send_error(status, message)

    def _answer_for_cancelled_phase(self) -> tuple[int, str] | None:
        if self.peer_gone or self._answered:
            return None
        if self.stop_reason is not None:
            # Closed by the server: a partial head, or a request that has just arrived on an
            # idle connection (not read yet), is refused rather than reset.
            if self.phase is _HEAD or unread_input(self.stream):
                return (503, self.stop_reason)
            return None
        if self.phase is _HEAD:
            return (408, "request head timed out")
        return None

    async def _request_loop(self) -> None:
        timeouts = self.timeouts
        adapter = self.adapter
        reader = self.reader
        scope = self._scope
        new_exchange, serve = HTTP1Exchange, serve_exchange
        if self.state.app.observer is not None:  # measured: the app has metrics (measure.py)
            new_exchange, serve = MeasuredHTTP1Exchange, serve_measured
        idle_timeout = timeouts.header_timeout  # a new connection: until its first byte
        # Each request runs in a copy of the context the connection started with (isolation.py)
        request_context, wake_watcher = contextvars.copy_context().copy, reader.wake_watcher
        while True:
            # Once per request, a checkpoint: reads and writes that need no wait are none, so
            # a client that pipelines cannot starve the other tasks, and a cancellation lands.
            await trio.lowlevel.checkpoint()
            self._answered = False
            if adapter.idle:
                arrived = reader.read_now()
                if self.state.shutting_down and self.requests and not arrived:
                    return  # between requests: closed (a new connection: see begin_shutdown)
                if not arrived:
                    # Idle only when it must wait (a request already there is read at once,
                    # in this same step); the idle deadline is cleared after the head.
                    self.phase = _IDLE
                    self.waiting_since = trio.current_time()
                    self.state.slot_evictable()
                    scope.deadline = self.waiting_since + idle_timeout
                    if self.state.shutting_down:
                        grace = min(idle_timeout, FIRST_REQUEST_GRACE)
                        scope.deadline = self.waiting_since + grace
                    while adapter.idle:
                        if adapter.eof:
                            return
                        await reader.fill()
            self.phase = _HEAD
            event = adapter.next_event()
            if event is NEED_DATA:
                self.waiting_since = trio.current_time()
                scope.deadline = self.waiting_since + timeouts.header_timeout
                while (event := adapter.next_event()) is NEED_DATA:
                    if not reader.read_now():
                        self.state.slot_evictable()
                        await reader.fill()
            if event is CLOSED:
                return
            assert type(event) is RequestHead
            if scope.deadline != math.inf:
                scope.deadline = math.inf
            if self.stop_reason is not None:  # closed as this request arrived: refuse it
                raise ProtocolError(503, self.stop_reason)
            # The exchange, inline: every coroutine in the await chain is resumed at each of
            # the task's steps, several per request.
            self.phase = _EXCHANGE
            self.requests += 1
            if event.content_length is None and not event.chunked:
                adapter.next_event()  # a body-less request: take its end now, no I/O
            exchange = self._exchange = new_exchange(self, event, scope)
            if self.peer_gone and timeouts.cancel_on_disconnect:
                scope.cancel()  # already gone: the handler starts cancelled
            # Read ahead while it runs, with the watcher woken the first time it blocks: a
            # handler that never waits, answered by a write that needs no wait either, costs
            # the watcher nothing.
            reader.reading_ahead = True
            try:
                # (cancelled: ``run`` still needs the exchange)
                outcome = await in_context(
                    request_context(), serve(exchange, self.state), wake_watcher
                )
            finally:
                reader.reading_ahead = False
            self._exchange = None
            del event, exchange  # not held (with its request) while the connection waits
            self._answered = True
            if outcome is not KEEP_ALIVE or not adapter.can_reuse:
                self._exchange_ended(outcome)
                return
            if adapter.in_body:
                self.phase = _DRAIN
                pace = BodyPace(timeouts)
                drained = 0
                while type(event := await self.next_body_event(scope, pace, drained)) is BodyChunk:
                    drained += len(event.data)
            adapter.start_next_cycle()
            idle_timeout = timeouts.keep_alive_timeout

    def _exchange_ended(self, outcome: Outcome) -> None:
        """The last exchange of the connection ended with ``outcome``: linger or not."""
        if outcome is PEER_GONE:
            self.peer_gone = True
        self.linger = outcome is LINGER

    # -- writing --------------------------------------------------------------------------------
    async def send_error(self, status: int, message: str) -> None:
        """Answer a request the connection could not hand to an exchange (a broken or timed
        out head, a refusal) with the standard error body and ``Connection: close``
        (``error_answer.py``); the connection ends after it."""
        if not await send_error_answer(self.stream, self.timeouts, status, message):
            self.peer_gone = True
