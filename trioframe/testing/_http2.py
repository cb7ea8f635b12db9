"""HTTP/2 for the test client: httpcore's HTTP/2 connection (the one httpx uses with
``http2=True``) over ``trio.testing`` memory streams to the server's own connection code.

httpcore dials through a network backend; this one "connects" by opening an in-memory stream
pair and serving the other end, so requests share one HTTP/2 connection as they would on a
socket (prior knowledge on ``http://``, ALPN ``h2`` on ``https://``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx
import trio

__all__ = ["HTTP2MemoryTransport"]


class HTTP2MemoryTransport(httpx.AsyncBaseTransport):
    """An httpx transport speaking HTTP/2 only, over streams from ``connect`` (which opens an
    in-memory connection and starts serving it). ``tls``: the client's ``ssl.SSLContext``
    (typed ``Any``: only ``trioframe._server`` imports ``ssl``)
    for ``https://`` URLs."""

    def __init__(self, connect: Callable[[], trio.abc.Stream], *, tls: Any = None) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls, http1=False, http2=True, network_backend=_MemoryBackend(connect)
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseBody(response),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for chunk in self._response.aiter_stream():
                yield chunk

    async def aclose(self) -> None:
        await self._response.aclose()


@contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's (they share their names)."""
    try:
        yield
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as exc:
        mapped = getattr(httpx, type(exc).__name__, httpx.TransportError)
        raise mapped(str(exc)) from exc


class _MemoryBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, connect: Callable[[], trio.abc.Stream]) -> None:
        self._connect = connect

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        await trio.lowlevel.checkpoint()
        return _MemoryNetworkStream(self._connect())

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)


class _MemoryNetworkStream(httpcore.AsyncNetworkStream):
    """A trio stream as httpcore sees a socket. Timeouts are not applied (as on the HTTP/1.1
    memory transport: tests drive time with ``trio.testing.MockClock``)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        try:
            return bytes(await self._stream.receive_some(max_bytes))
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        try:
            await self._stream.send_all(buffer)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self._stream)

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        secured = trio.SSLStream(self._stream, ssl_context, server_hostname=server_hostname)
        try:
            await secured.do_handshake()
        except trio.BrokenResourceError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return _MemoryNetworkStream(secured)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object" and isinstance(self._stream, trio.SSLStream):
            return self._stream  # forwards selected_alpn_protocol() and the rest
        return None
