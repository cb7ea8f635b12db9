"""The test client's WebSocket side: ``WebSocketTestSession`` (a wsproto client over an
in-memory stream), the opening handshake, and the two exceptions a test sees.

wsproto is the ``websocket`` extra, so it is imported where a session starts, never when
``trioframe.testing`` is imported: HTTP-only test suites work without it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any

import h11
import httpx
import trio

from .._websocket.messages import Binary, Close, Message, Ping, Pong, Text

if TYPE_CHECKING:
    import wsproto
    import wsproto.events

__all__ = ["WebSocketDisconnected", "WebSocketRejected", "WebSocketTestSession", "open_session"]

RECEIVE_SIZE = 64 * 1024
# Headers wsproto writes itself, or that make no sense on an upgrade request; a test's (or
# httpx's default) value for them is dropped. Other headers, ``Sec-WebSocket-*`` included,
# are sent as given, so a test can provoke a bad handshake.
_DROPPED = frozenset({b"host", b"connection", b"upgrade", b"content-length", b"transfer-encoding"})


class WebSocketDisconnected(Exception):
    """The WebSocket is closed: raised by ``receive()`` after the server's Close was
    delivered, by ``receive_text()`` and the other typed receives when the message is the
    Close, and by the sends once the connection is closed. ``code`` and ``reason`` are the
    closing code and reason (``1006`` and ``""`` when the connection dropped without a
    Close)."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason

    def __str__(self) -> str:
        suffix = f": {self.reason}" if self.reason else ""
        return f"WebSocket closed with code {self.code}{suffix}"


class WebSocketRejected(Exception):
    """The server answered the upgrade request with something other than ``101``.

    ``response`` is an ``httpx.Response`` with the status, headers and the whole body, so
    ``exc.response.status_code`` and ``exc.response.json()`` work as for any request.
    """

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"WebSocket upgrade rejected with status {response.status_code}")
        self.response = response


def _require_wsproto() -> None:
    try:
        import wsproto  # noqa: F401
    except ImportError:  # pragma: no cover - the extra is installed in the test suite
        raise ModuleNotFoundError(
            "WebSocket needs the 'websocket' extra: pip install 'trioframe[websocket]'"
        ) from None


class WebSocketTestSession:
    """One WebSocket connection from the test client to the app, opened by
    ``client.websocket(path)``::

        async with client.websocket("/ws", subprotocols=["chat"]) as ws:
            assert await ws.receive_text() == "Welcome!"
            await ws.send_text("hi")

    Every message the server sends is delivered once by ``receive()``, in order, its Close
    included (as ``Message.Close``); after that ``receive()`` raises ``WebSocketDisconnected``.
    Pings from the server are answered with a pong at once and also delivered. Receiving
    waits as long as the server is silent: put ``trio.fail_after`` around a test that might
    hang. One task may receive at a time; sends may come from any task.

    Leaving the ``async with`` block closes the session like ``close()`` (code 1000) if it
    is still open, then closes the in-memory connection.
    """

    CLOSE_TIMEOUT = 5.0
    """Seconds ``close()`` waits for the server's Close reply."""

    def __init__(self, stream: trio.abc.Stream, connection: wsproto.WSConnection) -> None:
        self._stream = stream
        self._ws = connection
        self._send_lock = trio.Lock()
        self._pending: deque[Message] = deque()
        self._text: list[str] = []
        self._binary = bytearray()
        self._close: Close | None = None  # the Close delivered (or queued) to the test
        self._sent_close: Close | None = None
        self.subprotocol: str | None = None
        """The subprotocol the server chose, or ``None``."""
        self.response_headers = httpx.Headers()
        """The headers of the server's ``101 Switching Protocols`` answer."""
        self.close_code: int | None = None
        """The code of the server's Close (``1006`` if the connection dropped without one);
        ``None`` until it arrived."""
        self.close_reason: str | None = None
        """The reason of the server's Close; ``None`` until it arrived."""

    # -- receiving ------------------------------------------------------------------------
    async def receive(self) -> Message:
        """The next message from the server: ``Message.Text``, ``Message.Binary``,
        ``Message.Ping``, ``Message.Pong`` or, once, ``Message.Close``; then raises
        ``WebSocketDisconnected``. A checkpoint; cancelling it loses no message (what was
        read stays buffered for the next call)."""
        while not self._pending:
            if self._close is not None:
                raise WebSocketDisconnected(self._close.code, self._close.reason)
            await self._read()
        return self._pending.popleft()

    async def receive_text(self) -> str:
        """The next message, which must be a text message (``TypeError`` otherwise;
        ``WebSocketDisconnected`` when it is the server's Close). Cancellation as ``receive``."""
        message = await self.receive()
        if isinstance(message, Text):
            return message.text
        raise self._unexpected(message, "a text message")

    async def receive_bytes(self) -> bytes:
        """The next message, which must be a binary message (``TypeError`` otherwise;
        ``WebSocketDisconnected`` when it is the server's Close). Cancellation as ``receive``."""
        message = await self.receive()
        if isinstance(message, Binary):
            return message.data
        raise self._unexpected(message, "a binary message")

    async def receive_json(self) -> Any:
        """The next message, which must be a text message holding JSON, decoded
        (``TypeError`` for another kind; ``json.JSONDecodeError`` for bad JSON;
        ``WebSocketDisconnected`` for the server's Close). Cancellation as ``receive``."""
        message = await self.receive()
        if isinstance(message, Text):
            return json.loads(message.text)
        raise self._unexpected(message, "a JSON text message")

    @staticmethod
    def _unexpected(message: Message, expected: str) -> Exception:
        if isinstance(message, Close):
            return WebSocketDisconnected(message.code, message.reason)
        return TypeError(f"expected {expected}, got {message!r}")

    # -- sending --------------------------------------------------------------------------
    async def send_text(self, text: str) -> None:
        """Send a text message. Raises ``WebSocketDisconnected`` when the connection is
        closing or closed. A checkpoint; cancelled midway, part of the frame may be sent."""
        from wsproto.events import TextMessage

        await self._send_message(TextMessage(data=text))

    async def send_bytes(self, data: bytes) -> None:
        """Send a binary message. Errors and cancellation as ``send_text``."""
        from wsproto.events import BytesMessage

        await self._send_message(BytesMessage(data=bytes(data)))

    async def send_json(self, value: Any) -> None:
        """Send ``value`` as JSON in a text message. Errors and cancellation as
        ``send_text``."""
        await self.send_text(json.dumps(value))

    async def ping(self, data: bytes = b"") -> None:
        """Send a ping; the server's pong arrives through ``receive()`` as
        ``Message.Pong(data)``. Errors and cancellation as ``send_text``."""
        from wsproto.events import Ping as PingEvent

        await self._send_message(PingEvent(payload=bytes(data)))

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a Close (unless the connection is already closing) and wait up to
        ``CLOSE_TIMEOUT`` seconds for the server's Close, which sets ``close_code`` and
        ``close_reason``. Messages that arrive meanwhile stay readable with ``receive()``,
        the server's Close last. Does nothing more once the server's Close arrived. A
        checkpoint; if cancelled, the Close may or may not have been sent."""
        from wsproto.connection import ConnectionState
        from wsproto.events import CloseConnection

        if self._ws.state is ConnectionState.OPEN:
            self._sent_close = Close(code, reason)
            await self._send_quietly(CloseConnection(code=code, reason=reason or None))
        with trio.move_on_after(self.CLOSE_TIMEOUT):
            while self._close is None:
                await self._read()

    async def __aenter__(self) -> WebSocketTestSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._close is None and self._sent_close is None:
                with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self.close()
        finally:
            await trio.aclose_forcefully(self._stream)

    # -- internals ------------------------------------------------------------------------
    async def _send_message(self, event: wsproto.events.Event) -> None:
        from wsproto.connection import ConnectionState

        if self._ws.state is not ConnectionState.OPEN:
            closed = self._close or self._sent_close or Close(1006, "")
            raise WebSocketDisconnected(closed.code, closed.reason)
        try:
            await self._send(event)
        except trio.BrokenResourceError:
            raise WebSocketDisconnected(1006, "the connection was lost") from None

    async def _send(self, event: wsproto.events.Event) -> None:
        async with self._send_lock:
            await self._stream.send_all(self._ws.send(event))

    async def _read(self) -> None:
        """Read once from the stream and queue what it completes."""
        from wsproto.connection import ConnectionState

        data = bytes(await self._stream.receive_some(RECEIVE_SIZE))
        if self._ws.state is ConnectionState.CLOSED:
            if not data and self._close is None:  # pragma: no cover - defensive
                self._closed_by_server(1006, "")
            return
        self._ws.receive_data(data or None)  # None: the stream ended (wsproto says 1006)
        for event in self._ws.events():
            await self._on_event(event)

    async def _on_event(self, event: wsproto.events.Event) -> None:
        from wsproto import events as ev
        from wsproto.connection import ConnectionState

        if isinstance(event, ev.TextMessage):
            self._text.append(event.data)
            if event.message_finished:
                self._pending.append(Text("".join(self._text)))
                self._text.clear()
        elif isinstance(event, ev.BytesMessage):
            self._binary += event.data
            if event.message_finished:
                self._pending.append(Binary(bytes(self._binary)))
                self._binary.clear()
        elif isinstance(event, ev.Ping):
            self._pending.append(Ping(bytes(event.payload)))
            if self._ws.state is ConnectionState.OPEN:
                await self._send_quietly(event.response())
        elif isinstance(event, ev.Pong):
            self._pending.append(Pong(bytes(event.payload)))
        elif isinstance(event, ev.CloseConnection):
            # The server's Close (answered with the same code), or wsproto failing the
            # connection on a protocol error (1002, 1007...), or the stream ending (1006).
            self._closed_by_server(int(event.code), event.reason or "")
            if self._ws.state in (ConnectionState.OPEN, ConnectionState.REMOTE_CLOSING):
                await self._send_quietly(event.response())

    def _closed_by_server(self, code: int, reason: str) -> None:
        if self._close is None:
            self._close = Close(code, reason)
            self.close_code, self.close_reason = code, reason
            self._pending.append(self._close)

    async def _send_quietly(self, event: wsproto.events.Event) -> None:
        # A server that went away is noticed when the end of the stream is read.
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._send(event)


class _HeadReader:
    """The head of the server's answer, read with h11 from the same bytes wsproto gets:
    wsproto keeps only some of a ``101``'s headers."""

    def __init__(self, host: str, target: str) -> None:
        self._h11 = h11.Connection(h11.CLIENT)
        self._h11.send(
            h11.Request(
                method="GET",
                target=target,
                headers=[("host", host), ("connection", "upgrade"), ("upgrade", "websocket")],
            )
        )
        self.headers: list[tuple[bytes, bytes]] | None = None

    def feed(self, data: bytes) -> None:
        if self.headers is not None or not data:
            return
        self._h11.receive_data(data)
        event = self._h11.next_event()
        if isinstance(event, h11.InformationalResponse | h11.Response):
            self.headers = list(event.headers.raw_items())


async def open_session(
    connect: Callable[[], trio.abc.Stream], request: httpx.Request, subprotocols: Sequence[str]
) -> WebSocketTestSession:
    """Open a connection with ``connect()``, send the upgrade for ``request`` (its URL,
    headers and cookies) and read the answer: a ``WebSocketTestSession`` for a ``101``,
    ``WebSocketRejected`` for anything else, ``httpx.RemoteProtocolError`` for no answer or a
    broken one. On any failure, cancellation included, the connection is closed."""
    _require_wsproto()
    from wsproto import WSConnection
    from wsproto import events as ev
    from wsproto.connection import ConnectionType

    host = request.headers.get("host") or request.url.netloc.decode("ascii")
    target = request.url.raw_path.decode("ascii")
    extra = [(k, v) for k, v in request.headers.raw if k.lower() not in _DROPPED]
    connection = WSConnection(ConnectionType.CLIENT)
    upgrade = connection.send(
        ev.Request(host=host, target=target, subprotocols=list(subprotocols), extra_headers=extra)
    )
    stream = connect()
    try:
        await stream.send_all(upgrade)
        session = WebSocketTestSession(stream, connection)
        await _read_answer(session, request, _HeadReader(host, target))
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return session


async def _read_answer(
    session: WebSocketTestSession, request: httpx.Request, head: _HeadReader
) -> None:
    """Read until the upgrade is accepted (then the session knows its subprotocol, headers
    and any message that came right after) or rejected (raises ``WebSocketRejected``)."""
    from wsproto import events as ev
    from wsproto.connection import ConnectionState
    from wsproto.utilities import RemoteProtocolError

    connection, stream = session._ws, session._stream
    rejection: ev.RejectConnection | None = None
    body = bytearray()
    while True:
        data = bytes(await stream.receive_some(RECEIVE_SIZE))
        if not data and rejection is None:
            raise httpx.RemoteProtocolError("server closed the connection without answering")
        head.feed(data)
        try:
            connection.receive_data(data or None)
        except RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(f"bad answer to the upgrade: {exc}") from exc
        for event in connection.events():
            if isinstance(event, ev.AcceptConnection):
                session.subprotocol = event.subprotocol
                session.response_headers = httpx.Headers(head.headers or [])
            elif isinstance(event, ev.RejectConnection):
                rejection = event
                if not event.has_body:
                    raise _rejected(request, event, body)
            elif isinstance(event, ev.RejectData):
                body += event.data
                if event.body_finished and rejection is not None:
                    raise _rejected(request, rejection, body)
            else:  # messages sent right after the 101 (a welcome, a Close)
                await session._on_event(event)
        if connection.state is not ConnectionState.CONNECTING and rejection is None:
            return
        if not data:  # the rejection's body is cut short
            raise httpx.RemoteProtocolError("server closed the connection mid-answer")


def _rejected(
    request: httpx.Request, event: wsproto.events.RejectConnection, body: bytearray
) -> WebSocketRejected:
    response = httpx.Response(
        event.status_code, headers=list(event.headers), content=bytes(body), request=request
    )
    return WebSocketRejected(response)
