"""One request/response exchange, whatever protocol carries it, and ``serve_exchange``: the one
function that serves it.

A served connection (``http1/``, ``http2/``) parses a request head and hands the app side an
``Exchange``: the head, a cancel scope of its own, and the means to read the body and write the
response. ``serve_exchange`` does the rest, identically for every protocol: it routes the
request first (``App.route``), builds the ``Request`` once from the head, the trusted proxies'
decision and the match (its ``BodyReader`` enforces the route's body limit: the one place a
413 for a body that is too large comes from), runs the route's chain, has the response finalised purely
(``_protocol/finalize.py``: Date, Content-Length, no body for HEAD/1xx/204/304; a whole
response by the exchange itself, ``send_whole``, which may cache its encoded head) and
written, or switches protocols for an accepted WebSocket upgrade. It returns how the exchange ended (an
``Outcome``): the exchange never changes its connection's state, the connection decides from
the outcome what follows.

The exchange's scope is where the protocol's per-exchange deadlines (body, send) and
disconnects (end of stream on HTTP/1.1, a reset stream on HTTP/2) land: cancelling it cancels
this exchange's handler and nothing else. The connection runs ``serve_exchange`` inside that
scope, and when the scope was cancelled, ``answer_cancelled`` after it: an error can still be
answered (408 for a body timeout, 503 at shutdown) or the exchange simply ends. On HTTP/1.1,
where exchanges come one at a time and a disconnect ends the connection anyway, the scope is
the connection's own (entering a cancel scope per request would cost more than the rest of the
exchange machinery together); on HTTP/2 each stream has one.
"""

from __future__ import annotations

import abc
import enum
import math
from contextlib import aclosing
from typing import TYPE_CHECKING

import trio

from .._body import EventStream, FileSource, Upgrade
from .._files.body import CHUNK_SIZE, FileBody, read_span
from .._files.resolve import resolve_file
from .._http.headers import Header, Headers
from .._http.method import KNOWN_METHODS, Method
from .._http.url import Uri
from .._protocol.errors import ProtocolError, UnsendableResponse
from .._protocol.finalize import body_allowed, final_headers
from .._protocol.websocket import is_websocket_upgrade
from .._request import BodyReader, Request
from .clock import http_date

if TYPE_CHECKING:
    from collections.abc import AsyncIterable

    from .._http.tls import TLSInfo
    from .._protocol.request_head import RequestHead
    from .._response import Response
    from .state import ServingState
    from .websocket import ServerSession

__all__ = [
    "CLOSE",
    "KEEP_ALIVE",
    "LINGER",
    "PEER_GONE",
    "Exchange",
    "ExchangeGone",
    "Outcome",
    "answer_cancelled",
    "serve_exchange",
]

_INTERNAL_ERROR = (500, "Internal Server Error")


class Outcome(enum.Enum):
    """How an exchange ended (``serve_exchange``, ``answer_cancelled``, and the ``Exchange``
    methods that end one return it); its connection decides what follows. An HTTP/2 stream
    ends with its exchange whatever the outcome."""

    KEEP_ALIVE = "the response went out whole: the connection may serve another request"
    CLOSE = "the connection closes after it (Connection: close, or the exchange was cut short)"
    LINGER = "as CLOSE, after reading for a moment what the client still sends (see linger)"
    PEER_GONE = "the peer went away under a write: nothing more can be sent to it"


# The members as module names, for the per-request code: reading a member through its Enum
# class costs about 940 instructions on CPython 3.11, a module global about 40.
KEEP_ALIVE, CLOSE, LINGER, PEER_GONE = (
    Outcome.KEEP_ALIVE,
    Outcome.CLOSE,
    Outcome.LINGER,
    Outcome.PEER_GONE,
)


class ExchangeGone(Exception):
    """The exchange cannot go on: its peer went away (or reset the stream) under a write.
    Raised by the ``send_*`` methods; nothing more can be sent for it."""


class Exchange(abc.ABC):
    """One request and its response, as a protocol connection presents them.

    ``head`` is the parsed request head; ``client``, ``scheme`` and ``tls`` describe the
    connection; ``scope`` is the cancel scope that cancels this exchange (entered by the
    connection, around ``serve_exchange``); ``response_started`` turns true once any byte of
    the response may have been written. ``websocket`` is the session running after an upgrade
    (shutdown asks it to close)."""

    def __init__(
        self,
        head: RequestHead,
        client: tuple[str, int] | None,
        scheme: str,
        tls: TLSInfo | None,
        scope: trio.CancelScope,
    ) -> None:
        self.head = head
        self.client = client
        self.scheme = scheme
        self.tls = tls
        self.scope = scope
        self.response_started = False
        self.websocket: ServerSession | None = None

    @abc.abstractmethod
    async def receive_body(self) -> bytes:
        """The next piece of the request body, ``b""`` at its end. Raises ``Error`` for a
        broken body (400) or the protocol's own limits. Cancellation: a checkpoint when it
        must wait; a body timeout cancels ``scope``."""

    def take_whole_body(self) -> bytes | None:
        """The rest of the request body when all of it has already arrived (and its end is
        read), else ``None``: then ``receive_body`` reads it. Never waits."""
        return None

    @abc.abstractmethod
    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        """Write a whole response as the app made it: the protocol finalises ``headers``
        (``final_headers``: Date, Content-Length) and leaves ``body`` out where the response
        has none (``body_allowed``); head, body and end go out together. The exchange's
        outcome. Raises ``UnsendableResponse`` (nothing written) when the protocol cannot
        carry it, ``ExchangeGone`` when the peer went away."""

    @abc.abstractmethod
    async def send_head(self, status: int, headers: list[Header]) -> None:
        """Write the head of a response whose body follows with ``send_data``/``send_end``.
        Raises like ``send_whole``."""

    @abc.abstractmethod
    async def send_data(self, data: bytes) -> None:
        """Write a piece of the response body (with backpressure: returns once the peer's
        flow control allows). Raises ``UnsendableResponse`` past a declared length and
        ``ExchangeGone``."""

    async def send_file(self, fd: int, offset: int, length: int) -> None:
        """Send ``length`` bytes of the open file ``fd`` from ``offset`` as response body:
        read in chunks in a worker thread, each sent (with ``send_data``'s backpressure)
        before the next is read. Raises like ``send_data``, and ``FileChanged`` when the
        file has got shorter. (Plain HTTP/1.1 overrides it with ``os.sendfile``.)"""
        end = offset + length
        while offset < end:
            size = min(CHUNK_SIZE, end - offset)
            await self.send_data(await read_span(fd, offset, size))
            offset += size

    @abc.abstractmethod
    async def send_end(self) -> Outcome:
        """End the response body; the exchange's outcome. Raises ``UnsendableResponse`` short
        of a declared length and ``ExchangeGone``."""

    @abc.abstractmethod
    async def send_error(self, status: int, message: str) -> Outcome:
        """Answer with the standard error body instead of a response the app made (nothing
        of the response has been written), then end the exchange; its outcome. Bounded by
        the send timeout, never raises for a peer that is gone."""

    @abc.abstractmethod
    async def upgrade(self, headers: list[Header]) -> trio.abc.Stream:
        """Accept the protocol switch the request asked for (HTTP/1.1: ``101`` with
        ``headers``) and return the byte stream the new protocol runs over. Raises
        ``ProtocolError`` when this request cannot switch."""

    @property
    def peer(self) -> tuple[str, int] | None:
        """The address the connection came from (``client`` may be another: the source a
        PROXY protocol header named)."""
        return self.client

    @abc.abstractmethod
    def cancel_answer(self) -> tuple[int, str] | None:
        """After ``scope`` was cancelled: the error to answer with (408 for a body timeout,
        503 at shutdown), or ``None`` when the exchange can only end (the peer is gone, the
        response has started, a send timed out)."""

    @abc.abstractmethod
    def cancel_cause(self) -> str | None:
        """Why the server cancels ``scope`` (``Request.cancelled_by``): ``"disconnect"``,
        ``"stream_reset"``, ``"connection_error"``, ``"shutdown"`` or ``"body_timeout"``;
        ``None`` while it has no reason to."""

    @abc.abstractmethod
    def refuse_body(self) -> None:
        """More of the request body arrived than its limit allows: the rest is not wanted.
        The response (a 413) still goes out (HTTP/1.1: with ``Connection: close``)."""

    @abc.abstractmethod
    def abort(self) -> Outcome:
        """End the exchange without completing its response; its outcome (HTTP/1.1: the
        connection closes after it)."""

    def routed(self, request: Request) -> None:  # noqa: B027 (a hook: most do nothing)
        """The request is built (its route known). Called only for an app with metrics, whose
        exchanges note it (``measure.Measured``); nothing otherwise."""


async def serve_exchange(exchange: Exchange, state: ServingState) -> Outcome:
    """Serve ``exchange`` through the app, inside ``exchange.scope``; how it ended. Raises
    nothing but the cancellation of that scope (then call ``answer_cancelled``): whatever
    else goes wrong is answered (500) or ends the exchange, logged when it is a bug. Once it
    is over, however it ended, the request's ``BackgroundTasks`` (if any) start."""
    head = exchange.head
    app = state.app
    try:
        method = KNOWN_METHODS.get(head.method) or Method.of(head.method)
        uri = Uri.parse(head.target.decode("ascii"))
        upgrade = app.has_websockets and _asks_for_websocket(head)
        found = app.route(method, uri.raw_path, upgrade)
        target = found.target
        client, scheme, fields = exchange.client, exchange.scheme, Headers(head.headers)
        if state.proxies is not None:
            client, scheme, fields = state.proxies.decide(client, scheme, fields)
        # Positionally: matching 18 keywords to parameter names costs over 1,200
        # instructions more (the order is checked by test_the_request_is_built_from_the_exchange).
        request = Request.served(
            method,
            uri,
            head.version,
            fields,
            found.params,
            client,
            scheme,
            BodyReader(
                exchange.receive_body,
                head.content_length,
                target.body_limit,
                target.body_setting,
                exchange.take_whole_body,
            ),
            head.bodyless,  # body_consumed: nothing to read, whoever asks for the body gets b""
            head.content_length,
            exchange.tls,
            head.protocol,
            state.shutdown,
            exchange.peer,
            target.states,
            app.paths,
            target.route,
            exchange,
        )
    except Exception:  # the head was checked before: a bug, this exchange's only
        state.log.exception("cannot build the request for %r", head.target)
        return await exchange.send_error(*_INTERNAL_ERROR)
    if app.observer is not None:  # the app's metrics want the route (see measure.py)
        exchange.routed(request)
    try:
        try:
            response = await target.run(request)
        except Exception:  # the chain answers every failure: this is a bug, not the client's
            state.log.exception("the app failed to answer %s %s", request.method, request.uri)
            return await exchange.send_error(*_INTERNAL_ERROR)
        if request.body_reader.exceeded:
            exchange.refuse_body()
        try:
            upgrade = type(response.body_stream) is Upgrade and response.status == 101
            if response.body_stream is None and not upgrade:
                return await exchange.send_whole(response.status, response.headers, response.body)
            return await _respond(exchange, response, request, state)
        except ExchangeGone:
            return PEER_GONE
        except Exception:  # the protocol layer refused the response (or a bug writing it)
            started = exchange.response_started
            state.log.exception(
                "cannot send %r to %s %s; %s",
                response,
                request.method,
                request.uri,
                "ending the exchange" if started else "answering 500 instead",
            )
            if started:
                return exchange.abort()
            return await exchange.send_error(*_INTERNAL_ERROR)
    finally:  # the exchange is over: start what the handler left for after it
        if request.background_tasks is not None:
            state.background.start(request.background_tasks)


def _asks_for_websocket(head: RequestHead) -> bool:
    """An HTTP/1.1 upgrade to WebSocket, or an HTTP/2 extended CONNECT for one (RFC 8441)."""
    if head.method == b"GET":
        return is_websocket_upgrade(b"GET", head.headers)
    return head.method == b"CONNECT" and head.protocol == "websocket"


async def answer_cancelled(exchange: Exchange) -> Outcome:
    """After ``exchange.scope`` was cancelled under ``serve_exchange``: answer the error the
    exchange still can (408, 503), or end it; how it ended. Run it outside the cancelled
    scope."""
    answer = exchange.cancel_answer()
    if answer is None:
        return exchange.abort()
    return await exchange.send_error(*answer)


async def _respond(
    exchange: Exchange, response: Response, request: Request, state: ServingState
) -> Outcome:
    """Finalise a streamed ``response`` and write it, or switch to WebSocket; the outcome. A
    file response a middleware made (the app resolves the handlers' own) is resolved here."""
    stream = response.body_stream
    if type(stream) is Upgrade and response.status == 101:
        return await _switch_to_websocket(exchange, response.headers, stream, state)
    if type(stream) is FileSource:
        response = await resolve_file(response, request)
        if response.body_stream is None:  # 304, 412, 416, 404: a bytes body
            return await exchange.send_whole(response.status, response.headers, response.body)
    stream = response.body_stream
    assert stream is not None  # serve_exchange writes bytes bodies itself
    status = response.status
    headers = final_headers(response.headers, status, None, http_date())
    send_body = body_allowed(exchange.head.method, status)
    async with aclosing(stream):  # type: ignore[type-var]
        await exchange.send_head(status, headers)
        if send_body:
            if type(stream) is FileBody:
                failed = await send_file_body(exchange, stream, state)
            else:
                failed = await _send_stream(exchange, stream, state)
            if failed is not None:
                return failed
        try:
            return await exchange.send_end()
        except UnsendableResponse:  # fewer bytes than the handler's Content-Length
            state.log.exception("streamed response body ended early; ending the exchange")
            return exchange.abort()


async def _send_stream(
    exchange: Exchange, stream: AsyncIterable[bytes], state: ServingState
) -> Outcome | None:
    """Send the chunks of a streamed body (an ``EventStream`` also ends at shutdown); ``None``
    once sent, the outcome of aborting the exchange when it failed
    (logged; the head is out, no error status can be sent any more)."""
    try:
        if type(stream) is EventStream:
            await _send_events(exchange, stream, state)
        else:
            async for chunk in stream:
                if chunk:
                    await exchange.send_data(chunk)
    except ExchangeGone:
        raise
    except Exception:
        state.log.exception("streaming response body failed")
        return exchange.abort()
    return None


async def send_file_body(exchange: Exchange, body: FileBody, state: ServingState) -> Outcome | None:
    """Send a file response's body, piece by piece (spans with ``exchange.send_file``);
    ``None`` once sent, the outcome of aborting the exchange when it failed (logged, as for a
    stream)."""
    try:
        for piece in body.pieces:
            if isinstance(piece, bytes):
                await exchange.send_data(piece)
            else:
                await exchange.send_file(body.fd, *piece)
    except ExchangeGone:
        raise
    except Exception:
        state.log.exception("sending a file failed")
        return exchange.abort()
    return None


async def _send_events(exchange: Exchange, stream: EventStream, state: ServingState) -> None:
    """Send a ``text/event-stream`` body until it ends or graceful shutdown begins, whichever
    comes first. ``state.begin_shutdown`` cancels the wait for the next event (never a write
    in progress, so the framing stays whole); the body then ends like any other (the last
    chunk on HTTP/1.1, ``END_STREAM`` on HTTP/2) and the connection closes, so an EventSource
    client sees a complete response and reconnects without an error (a compressed stream
    with its gzip trailer)."""
    iterator = aiter(stream)
    waits = state.event_stream_waits
    while not state.shutting_down:
        chunk: bytes | None = None
        with trio.CancelScope() as waiting:
            waits.add(waiting)
            try:
                chunk = await anext(iterator, None)
            finally:
                waits.discard(waiting)
        if chunk is None:  # the events ended, or shutdown began
            break
        if chunk:
            await exchange.send_data(chunk)
    tail = stream.finish()  # what closes a wrapped stream cut short (a gzip trailer)
    if tail:
        await exchange.send_data(tail)


async def _switch_to_websocket(
    exchange: Exchange, headers: list[Header], upgrade: Upgrade, state: ServingState
) -> Outcome:
    """Accept the upgrade and serve the WebSocket session until it ends; then the exchange's
    connection closes (the stream was the session's)."""
    from .websocket import ServerSession  # wsproto: imported only once it is needed

    if state.shutting_down:
        return await exchange.send_error(503, "the server is shutting down")
    try:
        stream = await exchange.upgrade([*headers, (b"date", http_date())])
    except ProtocolError as exc:
        return await exchange.send_error(exc.status, exc.message)
    exchange.scope.deadline = math.inf
    session = exchange.websocket = ServerSession(stream, state.config, upgrade.extensions)
    await session.serve(upgrade.run, upgrade.subprotocol)
    return CLOSE
