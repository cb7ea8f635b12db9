"""WebSocket for handlers: ``WebSocketConnection``, ``WebSocketClosed`` and the ``Message``
kinds. The opening handshake's protocol rules live in ``trioframe._protocol.websocket``, the
route-side checks and the 101 response in ``accept``, permessage-deflate in ``deflate`` and
the closing rule of RFC 6455 section 5.5.1 in ``half_closing`` (the only modules here that
import wsproto), and the server session in ``trioframe._server.websocket``."""

from .connection import WebSocketClosed, WebSocketConnection
from .messages import Message

__all__ = ["Message", "WebSocketClosed", "WebSocketConnection"]
