"""One HTTP/1.1 connection: its own nursery, a reader task, and the request loop.

The reader task is the only one that reads the stream: it feeds the protocol adapter and
wakes the request loop, so it also notices a client that goes away while a handler runs
(and cancels that handler when ``cancel_on_disconnect`` is on). The request loop parses
events, runs the app in a cancel scope of its own, and writes the response. Timeouts come
from ``ServerConfig``; nothing here takes a timeout argument.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import trio

from .._errors import Error, PayloadTooLarge, error_body
from .._http.headers import Headers
from .._http.method import Method
from .._http.url import Uri
from .._protocol.errors import ProtocolError
from .._protocol.http1 import (
    CLOSED,
    NEED_DATA,
    BodyChunk,
    BodyEnd,
    HTTP1Adapter,
    RequestHead,
    render_simple_response,
)
from .._request import Request
from .clock import http_date

if TYPE_CHECKING:
    from collections.abc import AsyncIterable

    from .._response import Response
    from .state import ServingState

__all__ = ["HTTP1Connection"]

RECEIVE_SIZE = 64 * 1024
HIGH_WATER = 256 * 1024  # the reader pauses while this much is received but unparsed
LINGER_SECONDS = 1.0  # after an error answer, how long unread input is drained before close

_JSON = (b"content-type", b"application/json")
_CLOSE = (b"connection", b"close")
_NO_BODY_STATUSES = frozenset({204, 304})


class _Drop(Exception):
    """Internal: end the connection now, with no (further) response."""


class _Timeout(Exception):
    """Internal: a wait for the peer's bytes passed its deadline."""


class HTTP1Connection:
    """Serve HTTP/1.1 requests on ``stream`` until the peer leaves, a limit ends the
    connection, or the server shuts down. ``await run()`` returns when the connection is
    closed; cancelling it closes the connection at once."""

    def __init__(
        self,
        state: ServingState,
        stream: trio.abc.HalfCloseableStream | trio.abc.Stream,
        client: tuple[str, int] | None,
        scheme: str = "http",
    ) -> None:
        self.state = state
        self.config = state.config
        self.stream = stream
        self.client = client
        self.scheme = scheme
        self.adapter = HTTP1Adapter(state.head_limits)
        self._data_lot = trio.lowlevel.ParkingLot()  # the request loop waits here for bytes
        self._reader_lot = trio.lowlevel.ParkingLot()  # the reader waits here when full
        self._peer_gone = False
        self._idle_scope: trio.CancelScope | None = None
        self._request_scope: trio.CancelScope | None = None
        self._cancelled_for_shutdown = False
        self._response_started = False
        self._must_close = False
        self._linger = False
        self._requests = 0
        self._body_received = 0
        self._head: RequestHead | None = None

    # -- lifetime ---------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the connection, then close the stream (also when cancelled)."""
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read_loop)
                try:
                    await self._serve()
                except _Drop:
                    pass
                finally:
                    nursery.cancel_scope.cancel()
            if self._linger and not self._peer_gone:
                await self._linger_close()
        finally:
            await trio.aclose_forcefully(self.stream)

    def begin_shutdown(self) -> None:
        """Graceful shutdown: an idle connection closes now; a busy one after its response."""
        if self._idle_scope is not None:
            self._idle_scope.cancel()

    def cancel_for_shutdown(self) -> None:
        """The shutdown grace period is over: cancel the running request (it gets a 503 if
        its response has not started)."""
        if self._request_scope is not None:
            self._cancelled_for_shutdown = True
            self._request_scope.cancel()
        elif self._idle_scope is not None:
            self._idle_scope.cancel()

    async def _linger_close(self) -> None:
        # Closing with unread input makes the kernel send RST, which can destroy the answer
        # we just sent. Half-close, then drain briefly.
        send_eof = getattr(self.stream, "send_eof", None)
        with trio.move_on_after(LINGER_SECONDS):
            try:
                if send_eof is not None:
                    await send_eof()
                while await self.stream.receive_some(RECEIVE_SIZE):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
                pass

    # -- the reader task ----------------------------------------------------------------------
    async def _read_loop(self) -> None:
        adapter = self.adapter
        receive_some = self.stream.receive_some
        while True:
            while adapter.buffered >= HIGH_WATER:
                await self._reader_lot.park()
            try:
                data = await receive_some(RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            adapter.receive_data(data)
            self._data_lot.unpark_all()
            if not data:
                self._on_peer_gone()
                return

    def _on_peer_gone(self) -> None:
        self._peer_gone = True
        scope = self._request_scope
        if scope is not None and self.config.cancel_on_disconnect:
            scope.cancel()

    async def _next_event(self, deadline: float) -> Any:
        adapter = self.adapter
        while True:
            event = adapter.next_event()
            if self._reader_lot:
                self._reader_lot.unpark_all()
            if event is not NEED_DATA:
                return event
            with trio.move_on_at(deadline) as scope:
                await self._data_lot.park()
            if scope.cancelled_caught:
                raise _Timeout

    # -- the request loop ---------------------------------------------------------------------
    async def _serve(self) -> None:
        config = self.config
        adapter = self.adapter
        idle_timeout = config.header_timeout  # a new connection: until its first byte
        while True:
            if adapter.idle:
                if self.state.shutting_down:
                    return
                with trio.move_on_after(idle_timeout) as self._idle_scope:
                    while adapter.idle and not self._peer_gone:
                        await self._data_lot.park()
                self._idle_scope = None
                if not adapter.buffered:
                    return  # idle timeout, peer gone or shutdown: close silently
            try:
                event = await self._next_event(trio.current_time() + config.header_timeout)
            except _Timeout:
                return await self._answer_protocol_error(408, "request head timed out")
            except ProtocolError as exc:
                return await self._answer_protocol_error(exc.status, exc.message)
            if event is CLOSED:
                return
            await self._handle(event)
            if not adapter.can_reuse:
                return
            if adapter.in_body and not await self._drain_body():
                return
            adapter.start_next_cycle()
            idle_timeout = config.keep_alive_timeout

    async def _handle(self, head: RequestHead) -> None:
        self._requests += 1
        self._head = head
        self._body_received = 0
        self._response_started = False
        request = Request(
            method=Method.of(head.method),
            uri=Uri.parse(head.target.decode("ascii")),
            version=head.version,
            headers=Headers(head.headers),
            client=self.client,
            scheme=self.scheme,
            body_reader=self._receive_body,
        )
        with trio.CancelScope() as scope:
            self._request_scope = scope
            if self._peer_gone and self.config.cancel_on_disconnect:
                scope.cancel()
            response = await self.state.app.handle(request)
            await self._send_response(head, response)
        self._request_scope = None
        if scope.cancelled_caught:
            if self._cancelled_for_shutdown and not self._response_started:
                await self._send_error_and_close(503, "the server is shutting down")
            raise _Drop

    # -- request body -------------------------------------------------------------------------
    async def _receive_body(self) -> bytes:
        """The next piece of the request body, ``b""`` at its end. Raises ``Error`` 413 over
        the body limit, 408 when the client stalls longer than ``body_timeout``, 400 for a
        broken body; the connection is then closed after the answer."""
        adapter = self.adapter
        if not adapter.in_body:
            return b""
        if adapter.they_expect_continue:
            try:
                await self._send_all(adapter.send_continue())
            except _Drop:
                self._on_peer_gone()
                await trio.lowlevel.checkpoint()
                raise Error(400, "client went away") from None
        try:
            event = await self._next_event(trio.current_time() + self.config.body_timeout)
        except _Timeout:
            self._must_close = True
            raise Error(408, "request body timed out") from None
        except ProtocolError as exc:
            self._must_close = True
            raise Error(exc.status, exc.message) from None
        if type(event) is BodyChunk:
            self._body_received += len(event.data)
            if self._body_received > self.state.app.max_body_size:
                self._must_close = True
                raise PayloadTooLarge(
                    f"request body is larger than {self.state.app.max_body_size} bytes"
                )
            return event.data
        assert type(event) is BodyEnd
        return b""

    async def _drain_body(self) -> bool:
        """Read and drop what the handler left of the body; False if the peer broke off."""
        try:
            deadline = trio.current_time() + self.config.body_timeout
            while type(await self._next_event(deadline)) is not BodyEnd:
                pass
        except (_Timeout, ProtocolError):
            return False
        return True

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
        adapter = self.adapter
        status = response.status
        headers = [*response.headers, (b"date", http_date())]
        body_allowed = status >= 200 and status not in _NO_BODY_STATUSES
        stream = response.body_stream
        if stream is None and body_allowed and not _has(headers, b"content-length"):
            headers.append((b"content-length", b"%d" % len(response.body)))
        if self._should_close(head):
            headers.append(_CLOSE)
            self._linger = self.adapter.in_body
        send_body = body_allowed and head.method != b"HEAD"
        data = adapter.send_head(status, headers)
        self._response_started = True
        if stream is None:
            if send_body and response.body:
                data += adapter.send_data(response.body)
            await self._send_all(data + adapter.send_end())
            return
        await self._send_all(data)
        if send_body:
            await self._send_stream(stream)
        await self._send_all(adapter.send_end())

    async def _send_stream(self, stream: AsyncIterable[bytes]) -> None:
        try:
            async with aclosing(stream) as chunks:  # type: ignore[type-var]
                async for chunk in chunks:
                    if chunk:
                        await self._send_all(self.adapter.send_data(chunk))
        except (_Drop, trio.Cancelled):
            raise
        except Exception:
            # The head is out: all we can do is cut the response short.
            self.state.log.exception("streaming response body failed")
            raise _Drop from None

    async def _send_all(self, data: bytes) -> None:
        with trio.move_on_after(self.config.send_timeout) as scope:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._peer_gone = True
                raise _Drop from None
        if scope.cancelled_caught:
            raise _Drop

    async def _answer_protocol_error(self, status: int, message: str) -> None:
        self._linger = True
        await self._send_error_and_close(status, message)

    async def _send_error_and_close(self, status: int, message: str) -> None:
        """Answer outside h11's state machine (it may never have seen a request), then end."""
        data = render_simple_response(
            status, [_JSON, (b"date", http_date())], error_body(status, message)
        )
        try:
            await self._send_all(data)
        except _Drop:
            pass


def _has(headers: list[tuple[bytes, bytes]], name: bytes) -> bool:
    return any(k == name for k, _ in headers)
