"""``WebSocketConnection``: what a WebSocket handler holds, and ``WebSocketClosed``.

The class is a thin, transport-free façade: the server (``trioframe._server.websocket``)
supplies a session that owns the wsproto state machine and the socket, so this module imports
neither trio nor wsproto and a test double can stand in for the session.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._codec.encode import encode_json
from .messages import Binary, Message, Text

__all__ = ["WebSocketClosed", "WebSocketConnection", "WebSocketSession", "check_close"]

#: Close codes an application may send (RFC 6455 section 7.4: the registered codes that may
#: appear in a Close frame, and the 3000-4999 range for libraries and applications).
_SENDABLE_CODES = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013})
_MAX_REASON_BYTES = 123  # a control frame's payload is at most 125 bytes, 2 of them the code
#: The messages ``messages_received`` counts.
_DATA = (Text, Binary)


class WebSocketClosed(Exception):
    """Raised by a send on a WebSocket connection that has ended (the peer closed, the
    connection dropped, or a send timed out). ``code`` and ``reason`` say how it ended. A
    handler may let it propagate: the server then ends quietly, with nothing logged."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(
            f"the WebSocket connection is closed ({code}{': ' if reason else ''}{reason})"
        )
        self.code = code
        self.reason = reason


def check_close(code: int, reason: str) -> None:
    """Refuse a close code or reason that cannot go into a Close frame (``ValueError``)."""
    if code not in _SENDABLE_CODES and not 3000 <= code <= 4999:
        raise ValueError(f"{code} is not a close code an endpoint may send")
    if len(reason.encode()) > _MAX_REASON_BYTES:
        raise ValueError(f"a close reason is at most {_MAX_REASON_BYTES} bytes of UTF-8")


class WebSocketSession(Protocol):
    """What the server provides behind a ``WebSocketConnection``."""

    async def send_message(self, data: str | bytes) -> None: ...
    async def send_ping(self, data: bytes) -> None: ...
    async def receive(self) -> Message | None: ...
    async def close(self, code: int, reason: str) -> None: ...


class WebSocketConnection:
    """One accepted WebSocket connection, as a handler sees it::

        async def echo(ws: WebSocketConnection) -> None:
            async for message in ws:
                match message:
                    case Message.Text(text):
                        await ws.send_text(text)

    Sending applies backpressure: ``send_*`` returns once the frame is handed to the socket,
    and waits while the peer reads slowly (at most ``send_timeout``; then the connection is
    dropped and the call raises ``WebSocketClosed``). Receiving reads from a bounded queue the
    server fills as frames arrive. All methods are cancellation points; cancelling a send
    part-way through a frame ends the connection (a frame cannot be taken back).
    """

    __slots__ = ("_session", "messages_received", "messages_sent", "subprotocol")

    def __init__(self, session: WebSocketSession, subprotocol: str | None) -> None:
        self._session = session
        #: The subprotocol chosen from the client's offer (the route's ``subprotocols`` list,
        #: first match wins), or ``None``.
        self.subprotocol = subprotocol
        #: Text and binary messages received (delivered to the handler) and sent so far.
        self.messages_received = 0
        self.messages_sent = 0

    def __repr__(self) -> str:
        return f"<WebSocketConnection subprotocol={self.subprotocol!r}>"

    async def send_text(self, text: str) -> None:
        """Send a text message. Raises ``WebSocketClosed`` once the connection has ended."""
        await self._session.send_message(text)
        self.messages_sent += 1

    async def send_bytes(self, data: bytes) -> None:
        """Send a binary message. Raises ``WebSocketClosed`` once the connection has ended."""
        await self._session.send_message(bytes(data))
        self.messages_sent += 1

    async def send_json(self, value: Any) -> None:
        """Send ``value`` as compact JSON in a text message (the encoder of
        ``Response.json``)."""
        await self._session.send_message(encode_json(value).decode())
        self.messages_sent += 1

    async def ping(self, data: bytes = b"") -> None:
        """Send a ping (at most 125 bytes); the peer's pong arrives as ``Message.Pong``."""
        if len(data) > 125:
            raise ValueError("a ping carries at most 125 bytes")
        await self._session.send_ping(bytes(data))

    async def recv(self) -> Message | None:
        """The next message, or ``None`` once the connection has ended.

        Pings are answered by the server and also delivered (when the queue has room);
        a peer's Close is delivered as ``Message.Close(code, reason)``, then ``None``. A
        connection that drops delivers ``Message.Close(1006, "")``; one the server closes for a
        protocol error or an oversized message delivers the code it sent (1002, 1007, 1009).
        """
        message = await self._session.receive()
        if type(message) in _DATA:
            self.messages_received += 1
        return message

    def __aiter__(self) -> WebSocketConnection:
        return self

    async def __anext__(self) -> Message:
        """``async for message in ws`` stops when :meth:`recv` would return ``None``."""
        message = await self._session.receive()
        if message is None:
            raise StopAsyncIteration
        if type(message) in _DATA:
            self.messages_received += 1
        return message

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Start the closing handshake; a no-op once the connection is closing or closed.
        The peer's reply arrives through :meth:`recv` as ``Message.Close``. Raises
        ``ValueError`` for a code that may not be sent or a reason over 123 bytes."""
        check_close(code, reason)
        await self._session.close(code, reason)
