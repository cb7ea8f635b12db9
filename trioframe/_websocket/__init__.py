"""WebSocket for handlers: ``WebSocketConnection``, ``WebSocketClosed`` and the ``Message``
kinds. The opening handshake's protocol rules live in ``trioframe._protocol.websocket``, the
route-side checks and the 101 response in ``accept``; the modules that import wsproto:
permessage-deflate in ``deflate``, the closing rule of RFC 6455 section 5.5.1 in
``half_closing``, message reassembly under the size limit in ``assembly``. The server session
is ``trioframe._server.websocket``."""

from .connection import WebSocketClosed, WebSocketConnection
from .messages import Message

__all__ = ["Message", "WebSocketClosed", "WebSocketConnection"]
