"""``TestClient``: drive an app through the real server connection code, in memory.

The only public module besides ``trioframe`` itself.
"""

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
