"""``TestClient``: an httpx ``AsyncClient`` wired to an in-memory server."""

from __future__ import annotations

from types import TracebackType
from typing import Any

import httpx
import trio

from .._routing.router import Router
from .._server.config import ServerConfig
from .._server.serve import Server
from ._transport import MemoryTransport

__all__ = ["TestClient"]


class TestClient:
    """Test an app without sockets, inside the test's own trio run::

        async with TestClient(router) as client:
            response = await client.get("/users/1")

    Entering freezes the router (``ConfigurationError`` surfaces here). Every request runs
    the real server connection code over ``trio.testing.memory_stream_pair()``, so limits,
    timeouts (use ``trio.testing.MockClock``) and error bodies behave as on a socket. The
    HTTP side is httpx's: ``get``, ``post``, ``request``, ``stream``, ``cookies`` and the rest
    are those of ``httpx.AsyncClient``. Leaving cancels any connection still open.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        router: Router,
        config: ServerConfig | None = None,
        *,
        base_url: str = "http://testserver",
        client: tuple[str, int] = ("127.0.0.1", 50000),
    ) -> None:
        self.server = Server(router, ("127.0.0.1", 0), config)
        self._base_url = base_url
        self._client_address = client
        self._nursery_manager: Any = None
        self._nursery: trio.Nursery | None = None
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> httpx.AsyncClient:
        self.server._prepare()
        self._nursery_manager = trio.open_nursery()
        nursery = self._nursery = await self._nursery_manager.__aenter__()
        transport = MemoryTransport(self.server, nursery, self._client_address)
        self._http = httpx.AsyncClient(transport=transport, base_url=self._base_url)
        return self._http

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._http is not None and self._nursery is not None
        try:
            await self._http.aclose()
        finally:
            self._nursery.cancel_scope.cancel()
            result: bool | None = await self._nursery_manager.__aexit__(exc_type, exc, tb)
        return result
