"""WebSocket for handlers: the message types (``messages``). The connection object and the
server side of the upgrade are still to come (issue 6); the opening handshake lives in
``trioframe._protocol.websocket``."""

from .messages import Message

__all__ = ["Message"]
