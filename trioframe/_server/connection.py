"""One HTTP/1.1 connection: its own nursery, one cancel scope, and the request loop.

Every timeout of the connection is a deadline on that one cancel scope, moved as the
connection changes phase (idle → head → app → body wait → sending), so a request costs a few
deadline updates rather than a cancel scope per wait. When the scope fires, the phase says
what to answer: nothing (idle, disconnect, send timeout), 408 (head or body timeout), or 503
(shutdown cut the request off before its response started). Either way the connection ends.

One task reads at a time (``reader.StreamReader``). Between requests the request loop reads
the stream itself. While a handler runs, a watcher task (started once per connection) takes
over reading as soon as the handler yields, so a client that goes away is noticed and, with
``cancel_on_disconnect``, its handler is cancelled. A handler that never blocks costs the
watcher only a wake-up.

An accepted WebSocket upgrade (a ``WebSocketAccept`` from the app) is answered 101 through
h11; then ``websocket.ServerSession`` takes the stream over in this same task and scope, and
the connection ends with it.
"""

from __future__ import annotations

import enum
import math
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any

import trio

from .._errors import Error, PayloadTooLarge, error_body
from .._http.headers import Headers
from .._http.method import Method
from .._http.url import Uri
from .._protocol.errors import ProtocolError
from .._protocol.finalize import body_allowed, final_headers
from .._protocol.http1 import (
    CLOSED,
    NEED_DATA,
    BodyChunk,
    HTTP1Adapter,
    RequestHead,
    render_simple_response,
)
from .._request import Request
from .._websocket.accept import WebSocketAccept
from .clock import http_date
from .reader import StreamReader, linger_close

if TYPE_CHECKING:
    from collections.abc import AsyncIterable

    from .._response import Response
    from .state import ServingState
    from .websocket import ServerSession

__all__ = ["HTTP1Connection"]

LINGER_SECONDS = 1.0  # after an error answer, how long unread input is drained before close

_JSON = (b"content-type", b"application/json")
_CLOSE = (b"connection", b"close")


class Phase(enum.Enum):
    """Where a connection is; decides what a fired deadline means."""

    IDLE = "waiting for a request"
    HEAD = "reading a request head"
    APP = "running the app"
    BODY = "waiting for request body bytes"
    SEND = "sending the response"
    WEBSOCKET = "serving a WebSocket"


class _Drop(Exception):
    """Internal: end the connection now, with no (further) response."""


class _InternalFailure(Exception):
    """Internal: our side failed before any byte of the response was sent (the protocol layer
    refused the response: a status or header h11 cannot write, a Content-Length that does not
    match the body). Already logged; the request is answered 500 and the connection closed."""


class HTTP1Connection:
    """Serve HTTP/1.1 requests on ``stream`` until the peer leaves, a limit ends the
    connection, or the server shuts down. ``await run()`` returns when the connection is
    closed; cancelling it closes the connection at once."""

    def __init__(
        self,
        state: ServingState,
        stream: trio.abc.Stream,
        client: tuple[str, int] | None,
        scheme: str = "http",
    ) -> None:
        self.state = state
        self.config = state.config
        self.stream = stream
        self.client = client
        self.scheme = scheme
        self.adapter = HTTP1Adapter(state.head_limits)
        self.phase = Phase.IDLE
        self._scope = trio.CancelScope()
        self._handler_running = False
        self.reader = StreamReader(
            stream, self.adapter, self._on_peer_gone, lambda: self._handler_running
        )
        self._peer_gone = False
        #: why the server closes this connection (shutdown, capacity), once it has decided to
        self._stop_reason: str | None = None
        #: when the connection last began waiting for a request (``trio.current_time()``)
        self.idle_since = 0.0
        self._response_started = False
        self._must_close = False
        self._linger = False
        self._requests = 0
        self._body_received = 0
        self._request: Request | None = None
        self._websocket: ServerSession | None = None

    # -- lifetime ---------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the connection, then close the stream (also when cancelled)."""
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self.reader.watch)
                try:
                    await self._serve()
                finally:
                    nursery.cancel_scope.cancel()
            if self._linger and not self._peer_gone:
                with trio.move_on_after(LINGER_SECONDS):
                    await linger_close(self.stream)
        finally:
            await trio.aclose_forcefully(self.stream)

    def begin_shutdown(self) -> None:
        """Graceful shutdown: an idle connection closes now; a busy one after its response
        (which says ``Connection: close``)."""
        if not self.close_if_idle("the server is shutting down") and self._websocket is not None:
            self._websocket.begin_shutdown()

    @property
    def is_idle(self) -> bool:
        """True while the connection waits for a request (no byte of it read yet)."""
        return self.phase is Phase.IDLE

    def close_if_idle(self, reason: str) -> bool:
        """Close the connection now if it is waiting for a request; returns whether it was.
        A request whose bytes arrive in that very moment is refused with 503 and ``reason``
        before its handler runs, never run and left unanswered."""
        if self.phase is not Phase.IDLE:
            return False
        self._stop_reason = reason
        self._scope.cancel()
        return True

    def cancel_for_shutdown(self) -> None:
        """The grace period is over: cancel whatever runs (a request whose response has not
        started gets a 503)."""
        self._stop_reason = "the server is shutting down"
        self._scope.cancel()

    async def _serve(self) -> None:
        answer: tuple[int, str] | None = None
        with self._scope:
            try:
                await self._request_loop()
            except ProtocolError as exc:
                if not exc.answer or self._response_started:
                    return  # not an HTTP peer, or this request was answered (a broken drain)
                answer = (exc.status, exc.message)
            except _InternalFailure:
                answer = (500, "Internal Server Error")
            except _Drop:
                return
        if answer is None and self._scope.cancelled_caught:
            answer = self._answer_for_cancelled_phase()
        if answer is not None:
            self._linger = True
            await self._send_error_and_close(*answer)

    def _answer_for_cancelled_phase(self) -> tuple[int, str] | None:
        if self._peer_gone or self._response_started:
            return None
        if self._stop_reason is not None and self.phase is not Phase.IDLE:
            return (503, self._stop_reason)
        if self.phase is Phase.HEAD:
            return (408, "request head timed out")
        if self.phase is Phase.BODY:
            return (408, "request body timed out")
        return None

    # -- reading ------------------------------------------------------------------------------
    def _on_peer_gone(self) -> None:
        self._peer_gone = True
        if self._handler_running and self.config.cancel_on_disconnect:
            self._scope.cancel()

    # -- the request loop ---------------------------------------------------------------------
    async def _request_loop(self) -> None:
        config = self.config
        adapter = self.adapter
        scope = self._scope
        idle_timeout = config.header_timeout  # a new connection: until its first byte
        while True:
            self._response_started = False  # a new cycle: an error may be answered again
            if adapter.idle:
                if self.state.shutting_down:
                    return
                self.phase = Phase.IDLE
                self.idle_since = now = trio.current_time()
                scope.deadline = now + idle_timeout
                self.state.connection_idle()
                while adapter.idle:
                    if adapter.eof:
                        return
                    await self.reader.fill()
            self.phase = Phase.HEAD
            event = adapter.next_event()
            if event is NEED_DATA:
                scope.deadline = trio.current_time() + config.header_timeout
                while (event := adapter.next_event()) is NEED_DATA:
                    await self.reader.fill()
            if event is CLOSED:
                return
            assert type(event) is RequestHead
            scope.deadline = math.inf
            if self._stop_reason is not None:  # closed as this request arrived: refuse it
                raise ProtocolError(503, self._stop_reason)
            await self._handle(event)
            if not adapter.can_reuse:
                return
            if adapter.in_body:
                await self._drain_body()
            adapter.start_next_cycle()
            idle_timeout = config.keep_alive_timeout

    async def _handle(self, head: RequestHead) -> None:
        self.phase = Phase.APP
        self._requests += 1
        self._body_received = 0
        if head.content_length is None and not head.chunked:
            self.adapter.next_event()  # a body-less request: take its end now, no I/O
        request = Request(
            method=Method.of(head.method),
            uri=Uri.parse(head.target.decode("ascii")),
            version=head.version,
            headers=Headers(head.headers),
            client=self.client,
            scheme=self.scheme,
            body_reader=self._receive_body,
            content_length=head.content_length,
        )
        self._request = request
        self._handler_running = True
        self.reader.wake_watcher()
        if self._peer_gone and self.config.cancel_on_disconnect:
            self._scope.cancel()
        try:
            try:
                response = await self.state.app.handle(request)
            except Exception:  # App.handle answers every failure; this is a bug, not the client's
                self.state.log.exception(
                    "the app failed to answer %s %s", request.method, request.uri
                )
                raise _InternalFailure from None
            if response.body_stream is None:
                self._handler_running = False
            if type(response) is WebSocketAccept and response.status == 101:
                await self._switch_to_websocket(response)
            else:
                await self._send_response(head, response)
        finally:
            self._handler_running = False

    # -- WebSocket ----------------------------------------------------------------------------
    async def _switch_to_websocket(self, accept: WebSocketAccept) -> None:
        """Send the 101 and serve the WebSocket session until it ends."""
        from .websocket import ServerSession  # wsproto: imported only once it is needed

        if self.state.shutting_down:
            raise ProtocolError(503, "the server is shutting down")
        data = self.adapter.send_switch([*accept.headers, (b"date", http_date())])
        self._response_started = True
        self.phase = Phase.SEND
        await self._send_with_deadline(data)
        self._scope.deadline = math.inf
        self.phase = Phase.WEBSOCKET
        session = self._websocket = ServerSession(
            self.stream, self.reader.receive_raw, self.config, accept.extensions
        )
        await session.serve(accept.run, accept.subprotocol)

    # -- request body -------------------------------------------------------------------------
    async def _receive_body(self) -> bytes:
        """The next piece of the request body, ``b""`` at its end.

        Raises ``Error`` 413 past the body limit and 400 for a broken body (the connection
        closes after the answer). A client that stalls longer than ``body_timeout`` cancels
        the request, which is answered 408. Cancellation: a checkpoint when it must wait."""
        adapter = self.adapter
        if not adapter.in_body:
            return b""
        if adapter.they_expect_continue:
            await self._send_all(adapter.send_continue())
        try:
            event = adapter.next_event()
            if event is NEED_DATA:
                event = await self._wait_body_event()
        except ProtocolError as exc:
            self._must_close = True
            if self._peer_gone and self.config.cancel_on_disconnect:
                await trio.lowlevel.checkpoint()  # the client left: deliver the cancellation
            raise Error(exc.status, exc.message) from None
        if type(event) is not BodyChunk:
            return b""
        self._body_received += len(event.data)
        limit, setting = self._body_limit()
        if self._body_received > limit:
            self._must_close = True
            raise PayloadTooLarge(f"request body is larger than {setting} ({limit} bytes)")
        return event.data

    def _body_limit(self) -> tuple[int, str]:
        request = self._request
        if request is not None and request.body_limit is not None:
            return request.body_limit
        return (self.state.app.max_body_size, "max_body_size")

    async def _wait_body_event(self) -> Any:
        phase, self.phase = self.phase, Phase.BODY
        self._scope.deadline = trio.current_time() + self.config.body_timeout
        try:
            while (event := self.adapter.next_event()) is NEED_DATA:
                await self.reader.fill()
        finally:
            # Also when the handler's own deadline cancels the wait; but when the connection
            # itself was cancelled (body timeout, disconnect), the phase says what to answer.
            if not self._scope.cancel_called:
                self._scope.deadline = math.inf
                self.phase = phase
        return event

    async def _drain_body(self) -> None:
        """Read and drop what the handler left of the body (``_should_close`` already chose
        to close when that is more than ``max_drain_size``)."""
        while type(await self._wait_body_event()) is BodyChunk:
            pass

    def _drainable(self, head: RequestHead) -> bool:
        if head.chunked or self.adapter.they_expect_continue:
            return False
        left = (head.content_length or 0) - self._body_received
        return left <= self.config.max_drain_size

    # -- response -----------------------------------------------------------------------------
    def _should_close(self, head: RequestHead) -> bool:
        return (
            self._must_close
            or self.state.shutting_down
            or self._requests >= self.config.max_requests_per_connection
            or (self.adapter.in_body and not self._drainable(head))
        )

    async def _send_response(self, head: RequestHead, response: Response) -> None:
        """Write ``response``; each write must finish within ``send_timeout``."""
        stream = response.body_stream
        if stream is None:
            data = self._serialize(head, response)
            self._response_started = True
            self.phase = Phase.SEND
            await self._send_with_deadline(data)
            return
        async with aclosing(stream):  # type: ignore[type-var]
            data = self._serialize(head, response)
            self._response_started = True
            self.phase = Phase.SEND
            await self._send_with_deadline(data)
            self._scope.deadline = math.inf  # producing the first chunk may take any time
            if body_allowed(head.method, response.status):
                await self._send_stream(stream)
            try:
                end = self.adapter.send_end()
            except Exception:  # h11: fewer bytes than the handler's Content-Length
                self.state.log.exception("streamed response body ended early; closing")
                raise _Drop from None
            await self._send_with_deadline(end)

    def _serialize(self, head: RequestHead, response: Response) -> bytes:
        """The response's head as bytes, followed by its body and end unless it streams.
        Anything the protocol layer refuses is logged once and raised as
        ``_InternalFailure`` (nothing has been sent: the request gets a 500)."""
        adapter = self.adapter
        status = response.status
        stream = response.body_stream
        size = None if stream is not None else len(response.body)
        headers = final_headers(response.headers, status, size, http_date())
        if self._should_close(head):
            headers.append(_CLOSE)
            self._linger = adapter.in_body
        try:
            data = adapter.send_head(status, headers)
            if stream is None:
                if response.body and body_allowed(head.method, status):
                    data += adapter.send_data(response.body)
                data += adapter.send_end()
        except Exception:
            self.state.log.exception(
                "cannot send %r to %s %s; answering 500 instead",
                response,
                head.method.decode("latin-1"),
                head.target.decode("latin-1"),
            )
            raise _InternalFailure from None
        return data

    async def _send_stream(self, stream: AsyncIterable[bytes]) -> None:
        try:
            async for chunk in stream:
                if chunk:
                    await self._send_with_deadline(self.adapter.send_data(chunk))
                    self._scope.deadline = math.inf  # the next chunk may take any time
        except _Drop:
            raise
        except Exception:
            # The head is out, so no error status can be sent: cut the body short.
            self.state.log.exception("streaming response body failed")
            raise _Drop from None

    async def _send_with_deadline(self, data: bytes) -> None:
        # The deadline stays after the write: whatever waits next sets its own.
        self._scope.deadline = trio.current_time() + self.config.send_timeout
        await self._send_all(data)

    async def _send_all(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._peer_gone = True
            raise _Drop from None

    async def _send_error_and_close(self, status: int, message: str) -> None:
        """Answer outside h11's state machine (it may never have seen a request)."""
        data = render_simple_response(
            status, [_JSON, (b"date", http_date())], error_body(status, message)
        )
        with trio.move_on_after(self.config.send_timeout):
            with suppress(_Drop):
                await self._send_all(data)
