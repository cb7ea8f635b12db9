"""The server's settings: ``ServerConfig`` (flat keywords outside, groups inside) and the
groups it is made of, one module each."""

from .app_limits import AppLimits
from .http2 import HTTP2Options
from .limits import Limits
from .processes import Processes
from .protocols import HTTP1_PARSERS, Protocols
from .proxies import PROXY_HEADERS, Proxies
from .server_config import GROUPS, ServerConfig
from .timeouts import Timeouts
from .websocket import WebSocketOptions

__all__ = [
    "GROUPS",
    "HTTP1_PARSERS",
    "PROXY_HEADERS",
    "AppLimits",
    "HTTP2Options",
    "Limits",
    "Processes",
    "Protocols",
    "Proxies",
    "ServerConfig",
    "Timeouts",
    "WebSocketOptions",
]
