"""``TestClient``: drive an app through the real server connection code, in memory.

The only public module besides ``trioframe`` itself. It needs httpx: install the ``testing``
extra (``pip install 'trioframe[testing]'``).
"""

try:
    import httpx as _httpx  # noqa: F401
except ImportError:
    raise ImportError("trioframe.testing needs httpx: pip install 'trioframe[testing]'") from None

from ._client import TestClient as TestClient
from ._client import TestHttpClient as TestHttpClient
from ._websocket import WebSocketDisconnected as WebSocketDisconnected
from ._websocket import WebSocketRejected as WebSocketRejected
from ._websocket import WebSocketTestSession as WebSocketTestSession

__all__ = [
    "TestClient",
    "TestHttpClient",
    "WebSocketDisconnected",
    "WebSocketRejected",
    "WebSocketTestSession",
]
