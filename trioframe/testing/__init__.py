"""``TestClient``: drive an app through the real server connection code, in memory.

The only public module besides ``trioframe`` itself.
"""

from ._client import TestClient as TestClient

__all__ = ["TestClient"]
