"""An httpx transport that speaks HTTP/1.1 (through h11) over ``trio.testing`` memory
streams to the server's own connection code. One in-memory connection per request; the
WebSocket session (``_websocket``) opens its connection here too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import h11
import httpx
import trio
import trio.testing

if TYPE_CHECKING:
    from .._server.serve import Server

__all__ = ["MemoryTransport"]


class MemoryTransport(httpx.AsyncBaseTransport):
    """Each request opens a fresh in-memory connection served by ``server.handle_stream``
    in ``nursery`` (the test client's nursery). With ``tls`` (a client ``ssl.SSLContext``),
    the connection runs TLS to ``hostname``, its handshake done on first use."""

    def __init__(
        self,
        server: Server,
        nursery: trio.Nursery,
        client: tuple[str, int],
        *,
        tls: Any = None,
        hostname: str = "testserver",
    ) -> None:
        self._server = server
        self._nursery = nursery
        self._client = client
        self._tls = tls
        self._hostname = hostname

    def connect(self) -> trio.abc.Stream:
        """Open a fresh in-memory connection and start serving its other end; returns the
        client's end (wrapped in TLS when the client speaks it). Not a checkpoint. The caller
        closes the stream; leaving the test client cancels the serving task."""
        client_stream = self.connect_plain()
        if self._tls is None:
            return client_stream
        return trio.SSLStream(client_stream, self._tls, server_hostname=self._hostname)

    def connect_plain(self) -> trio.abc.Stream:
        """Like ``connect``, without the client's TLS layer (for a client that starts TLS
        itself)."""
        client_stream, server_stream = trio.testing.memory_stream_pair()
        self._nursery.start_soon(self._server.handle_stream, server_stream, self._client)
        return client_stream

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        client_stream = self.connect()
        connection = h11.Connection(h11.CLIENT)
        target = request.url.raw_path
        outgoing = connection.send(
            h11.Request(method=request.method, target=target, headers=list(request.headers.raw))
        )
        try:
            await client_stream.send_all(outgoing or b"")
            async for chunk in request.stream:  # type: ignore[union-attr]
                if chunk:
                    await client_stream.send_all(connection.send(h11.Data(data=chunk)) or b"")
            await client_stream.send_all(connection.send(h11.EndOfMessage()) or b"")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the server answered early and closed; its answer is still readable
        while True:
            event = await _next_event(connection, client_stream)
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("server closed the connection without answering")
        return httpx.Response(
            status_code=event.status_code,
            headers=list(event.headers),
            stream=_ResponseBody(connection, client_stream),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": bytes(event.reason)},
        )


async def _next_event(connection: h11.Connection, stream: trio.abc.Stream) -> object:
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(bytes(await stream.receive_some()))
            continue
        if isinstance(event, h11.InformationalResponse):
            continue
        return event


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(self, connection: h11.Connection, stream: trio.abc.Stream) -> None:
        self._connection = connection
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            event = await _next_event(self._connection, self._stream)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self._stream)
