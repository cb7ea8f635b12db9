"""``TestClient``, and ``TestHttpClient``: the httpx ``AsyncClient`` it gives, wired to an
in-memory server, with ``websocket()`` beside httpx's HTTP methods."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any

import httpx
import trio

from .._routing.router import Router
from .._server.config import ServerConfig
from .._server.lifespan import Lifecycle
from .._server.serve import Server
from .._server.tls import memory_tls_contexts
from ._http2 import HTTP2MemoryTransport
from ._transport import MemoryTransport
from ._websocket import WebSocketTestSession, open_session

__all__ = ["TestClient", "TestHttpClient"]


class TestHttpClient(httpx.AsyncClient):
    """What ``async with TestClient(router) as client`` gives: an ``httpx.AsyncClient`` whose
    requests go to the app in memory, plus ``websocket()``."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        transport: MemoryTransport,
        *,
        base_url: str,
        http2: HTTP2MemoryTransport | None = None,
    ) -> None:
        super().__init__(transport=http2 or transport, base_url=base_url)
        self._memory = transport

    @asynccontextmanager
    async def websocket(
        self,
        url: str,
        *,
        subprotocols: Sequence[str] = (),
        headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
    ) -> AsyncIterator[WebSocketTestSession]:
        """Open a WebSocket to ``url`` (relative to the base URL; a query string is kept)::

            async with client.websocket("/ws", subprotocols=["chat"]) as ws:
                assert await ws.receive_text() == "Welcome!"

        The upgrade request carries the base URL's host, the client's headers and
        ``headers``, and the cookies of ``client.cookies`` that match the URL (over
        HTTP/1.1, also when the client speaks HTTP/2 for plain requests). Entering
        raises ``WebSocketRejected`` (its ``response`` an ``httpx.Response``) when the
        server answers with anything but ``101``. Leaving closes the session (Close 1000,
        then a bounded wait for the server's reply) and its in-memory connection; a
        cancelled exit closes the connection at once.
        """
        request = self.build_request("GET", url, headers=headers)
        session = await open_session(self._memory.connect, request, subprotocols)
        async with session:
            yield session


class TestClient:
    """Test an app without sockets, inside the test's own trio run::

        async with TestClient(router) as client:
            response = await client.get("/users/1")

    Entering freezes the router (``ConfigurationError`` surfaces here). Every request runs
    the real server connection code over ``trio.testing.memory_stream_pair()``, so limits,
    timeouts (use ``trio.testing.MockClock``) and error bodies behave as on a socket. The
    HTTP side is httpx's: ``get``, ``post``, ``request``, ``stream``, ``cookies`` and the rest
    are those of ``httpx.AsyncClient``; ``client.websocket(path)`` opens a WebSocket (see
    ``TestHttpClient``). Leaving sets the ``Shutdown`` signal and cancels any connection
    still open. The router's lifespans are entered before the client is returned (what one
    raises while entering is raised here, as is the ``ConfigurationError`` of a ``State[T]``
    that no lifespan yielded) and exited on leaving, after the connections and after the
    requests' ``BackgroundTasks`` have finished (those still running at the config's
    ``shutdown_timeout`` are cancelled). A task of the app nursery that raised is logged
    when it happens and raised on leaving.

    ``tls=True`` runs every connection over TLS, still in memory: the server gets a
    certificate for the base URL's host from a throwaway CA the client trusts (the
    ``self-signed`` extra), the base URL defaults to ``https://testserver``, and the app sees
    ``request.scheme == "https"`` and ``request.tls``, so HSTS, ``Secure`` cookies and
    redirects to https can be tested without sockets. It replaces the config's own ``tls``.

    ``http2=True`` sends every HTTP request over HTTP/2 (httpx's own HTTP/2 client, sharing
    one in-memory connection as on a socket: prior knowledge on ``http://``, ALPN with
    ``tls=True``); the server's config gets ``http2`` turned on and the app sees
    ``request.version == "2"``. ``client.websocket()`` still opens its WebSocket over
    HTTP/1.1.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        router: Router,
        config: ServerConfig | None = None,
        *,
        base_url: str | None = None,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        tls: bool = False,
        http2: bool = False,
    ) -> None:
        if base_url is None:
            base_url = "https://testserver" if tls else "http://testserver"
        config = config or ServerConfig()
        if http2:
            config = config.with_http2()
        self._http2 = http2
        self._client_tls: Any = None
        if tls:
            server_context, self._client_tls = memory_tls_contexts(httpx.URL(base_url).host)
            config = config.with_tls(server_context)
        self.server = Server(router, ("127.0.0.1", 0), config)
        self._base_url = base_url
        self._client_address = client
        self._nursery_manager: Any = None
        self._nursery: trio.Nursery | None = None
        self._http: TestHttpClient | None = None
        self._lifespans: AbstractAsyncContextManager[None] | None = None

    async def __aenter__(self) -> TestHttpClient:
        state = self.server._prepare()
        state.renew_shutdown()
        self._lifespans = Lifecycle(
            state.app.lifespans, state.app.check_late_state, state.background
        ).running()
        await self._lifespans.__aenter__()
        try:
            self._nursery_manager = trio.open_nursery()
            nursery = self._nursery = await self._nursery_manager.__aenter__()
        except BaseException:
            await self._lifespans.__aexit__(None, None, None)
            raise
        host = httpx.URL(self._base_url).host
        transport = MemoryTransport(
            self.server, nursery, self._client_address, tls=self._client_tls, hostname=host
        )
        http2 = None
        if self._http2:
            http2 = HTTP2MemoryTransport(transport.connect_plain, tls=self._client_tls)
        self._http = TestHttpClient(transport, base_url=self._base_url, http2=http2)
        return self._http

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._http is not None and self._nursery is not None
        assert self._lifespans is not None
        try:
            try:
                self.server._prepare().begin_shutdown()
                await self._http.aclose()
            finally:
                self._nursery.cancel_scope.cancel()
                result: bool | None = await self._nursery_manager.__aexit__(exc_type, exc, tb)
            state = self.server._prepare()
            with trio.move_on_after(self.server.config.timeouts.shutdown_timeout):
                await state.background.wait_idle()  # then cancelled with the lifespans' tasks
        finally:
            await self._lifespans.__aexit__(None, None, None)
        return result
