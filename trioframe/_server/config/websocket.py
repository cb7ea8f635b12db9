"""``WebSocketOptions``: the server's timers on an open WebSocket. The message size, the
allowed origins and compression are the app's (``AppLimits``)."""

from __future__ import annotations

import attrs

from .checks import positive

__all__ = ["WebSocketOptions"]


@attrs.frozen(kw_only=True)
class WebSocketOptions:
    """Keep-alive pings and the closing handshake. Durations are seconds."""

    #: Time between keep-alive pings on an open WebSocket (default 20 s).
    websocket_ping_interval: float = attrs.field(default=20.0, validator=positive)
    #: A peer that has not answered a keep-alive ping this long after it (default 20 s) is
    #: dropped.
    websocket_ping_timeout: float = attrs.field(default=20.0, validator=positive)
    #: Longest wait for the peer's Close after the server's (default 10 s), and the grace a
    #: handler gets (with ``cancel_on_disconnect``) after its connection has ended; also the
    #: longest the server waits for the handler to answer the messages that came before the
    #: peer's Close (then it replies) or before a bad frame (then it fails the connection).
    websocket_close_timeout: float = attrs.field(default=10.0, validator=positive)
