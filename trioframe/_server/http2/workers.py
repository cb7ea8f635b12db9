"""``StreamWorkers``: the tasks that serve an HTTP/2 connection's streams.

Starting a trio task and entering a cancel scope cost about as much as the rest of a small
request (some 50,000 instructions each under callgrind). A connection whose client keeps
several streams open at once (a browser, a gRPC client, a load balancer) therefore keeps the
worker tasks it started: a worker that has served its stream waits for the next one instead
of returning, inside the same cancel scope, which is each stream's scope in turn. A
connection that has only ever had one stream at a time starts a task per stream and keeps
none: an idle connection costs no more than it did before its first request.

A stream's scope is cancelled only while its worker serves it (the connection cancels the
exchanges it still holds, and an exchange drops the worker's scope once it is done); a worker
whose scope was cancelled, by a reset, a timeout or a deadline that passed as the handler
returned, ends with its stream, and the next stream gets a new worker. Each stream runs in
its own copy of the context the connection started with, as a new task would: nothing one
stream sets in a ``ContextVar`` is seen by the next its worker serves. Waiting workers hold
no stream and end when the connection's nursery is cancelled, as the connection closes.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio
from outcome import Value

from ..exchange import answer_cancelled
from .exchange import UNSERVED

if TYPE_CHECKING:
    from ..state import ServingState
    from .exchange import HTTP2Exchange

__all__ = ["StreamWorkers"]

Answer = tuple[int, str]


class StreamWorkers:
    """Serve each exchange ``start`` is given with ``serve`` (``serve_exchange``, or its
    measured variant) and ``state`` in a worker task, then call ``done`` with it (also when it
    was cancelled or failed); ``done`` runs before the worker waits for another stream."""

    __slots__ = ("_context", "_done", "_idle", "_serve", "_state", "kept")

    def __init__(
        self,
        serve: Callable[[HTTP2Exchange, ServingState], Awaitable[object]],
        state: ServingState,
        done: Callable[[HTTP2Exchange], None],
    ) -> None:
        self._serve, self._state, self._done = serve, state, done
        #: the context the connection started with, a copy of which each stream runs in
        self._context = contextvars.copy_context()
        #: the workers waiting for a stream, and their scopes (a stack)
        self._idle: list[tuple[trio.lowlevel.Task, trio.CancelScope]] = []
        #: whether workers wait for the next stream: once two streams were in progress at once
        self.kept = False

    @property
    def waiting(self) -> int:
        """How many workers wait for a stream."""
        return len(self._idle)

    def start(self, nursery: trio.Nursery, exchange: HTTP2Exchange, active: int) -> None:
        """Serve ``exchange``, one of ``active`` streams now in progress: by a waiting worker
        (the one that waited least), else by a new task in ``nursery``. The exchange's scope
        is its worker's from here, so that cancelling it before the worker runs counts."""
        if active > 1:
            self.kept = True
        if self._idle:
            task, exchange.scope = self._idle.pop()
            # trio runs each step of a task in ``task.context``: from its next step (as the
            # stream starts) the worker runs in a fresh copy, as a new task would.
            task.context = self._context.copy()
            trio.lowlevel.reschedule(task, Value(exchange))
        else:
            exchange.scope = trio.CancelScope()
            nursery.start_soon(self._work, exchange)

    def refuse(self, nursery: trio.Nursery, exchange: HTTP2Exchange, answer: Answer) -> None:
        """Answer ``exchange`` (a refused, malformed request) with ``answer``, the status and
        the message of its error, in a task of its own."""
        exchange.scope = trio.CancelScope()
        nursery.start_soon(self._refuse, exchange, answer)

    async def _refuse(self, exchange: HTTP2Exchange, answer: Answer) -> None:
        try:
            await exchange.send_error(*answer)
        finally:
            self._done(exchange)

    async def _work(self, first: HTTP2Exchange) -> None:
        exchange: HTTP2Exchange | None = first
        try:
            with first.scope as scope:
                while exchange is not None:
                    await self._serve(exchange, self._state)
                    if scope.deadline != math.inf:  # (what the stream left, not the next's)
                        scope.deadline = math.inf
                    done, exchange = exchange, None
                    self._done(done)
                    done.scope = UNSERVED  # (what still holds it cannot reach the next stream)
                    if self.kept:  # (a scope cancelled as the handler returned ends it here)
                        exchange = await self._next(scope)
            if scope.cancelled_caught and exchange is not None:
                await answer_cancelled(exchange)
        finally:
            if exchange is not None:
                self._done(exchange)

    async def _next(self, scope: trio.CancelScope) -> HTTP2Exchange:
        """Wait for the next stream to serve in ``scope``. Cancellation: the connection's
        nursery being cancelled ends the wait (and the worker)."""
        waiting = (trio.lowlevel.current_task(), scope)
        self._idle.append(waiting)

        def abort(_: object) -> trio.lowlevel.Abort:
            self._idle.remove(waiting)
            return trio.lowlevel.Abort.SUCCEEDED

        exchange: HTTP2Exchange = await trio.lowlevel.wait_task_rescheduled(abort)
        return exchange
