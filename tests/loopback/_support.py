"""Helpers shared by the loopback tests: an in-process server context manager and a tiny
raw HTTP/1.1 client over ``trio.open_tcp_stream`` that reads responses byte-exactly."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus

import attrs
import trio

from trioframe import Router, Server, ServerConfig

__all__ = [
    "RawConnection",
    "RawResponse",
    "Served",
    "assert_error_body",
    "fetch",
    "serving",
    "simple_get",
]

#: After ``server.shutdown()``, how long the helper waits for ``serve()`` before cancelling.
SHUTDOWN_GRACE = 3.0


@attrs.frozen
class Served:
    server: Server
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


@asynccontextmanager
async def serving(
    router: Router, config: ServerConfig | None = None, addr: str | tuple[str, int] = "127.0.0.1:0"
) -> AsyncIterator[Served]:
    """Run ``Server(router, addr, config)`` in a nursery; shut it down gracefully on exit
    (cancelled after ``SHUTDOWN_GRACE`` seconds if it has not finished by then)."""
    server = Server(router, addr, config or ServerConfig())
    async with trio.open_nursery() as nursery:
        addresses = await nursery.start(server.serve)
        host, port = addresses[0]
        try:
            yield Served(server, host, port)
        finally:
            server.shutdown()
            nursery.cancel_scope.deadline = trio.current_time() + SHUTDOWN_GRACE


@attrs.define
class RawResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    version: str = "HTTP/1.1"

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self.headers if key == name]

    @property
    def closes(self) -> bool:
        value = self.header("connection") or ""
        return "close" in [token.strip().lower() for token in value.split(",")]

    def json(self) -> object:
        return json.loads(self.body)


class RawConnection:
    """A buffered client side of one TCP connection."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self._buffer = bytearray()
        self.eof = False

    @classmethod
    async def open(cls, host: str, port: int) -> RawConnection:
        return cls(await trio.open_tcp_stream(host, port))

    @property
    def local_port(self) -> int:
        return int(self.stream.socket.getsockname()[1])

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def receive_some(self) -> bytes:
        """Read what arrives next into the buffer (``b""`` at EOF); returns those bytes."""
        try:
            data = await self.stream.receive_some(65536)
        except trio.BrokenResourceError:  # connection reset: treat as end of stream
            data = b""
        if not data:
            self.eof = True
        self._buffer += data
        return data

    async def _read_until(self, marker: bytes) -> bytes:
        while (index := self._buffer.find(marker)) == -1:
            if not await self.receive_some():
                raise EOFError(f"connection closed before {marker!r}; got {bytes(self._buffer)!r}")
        data = bytes(self._buffer[: index + len(marker)])
        del self._buffer[: index + len(marker)]
        return data

    async def _read_exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not await self.receive_some():
                raise EOFError(f"connection closed after {len(self._buffer)} of {size} bytes")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def read_until_eof(self) -> bytes:
        """Everything left until the server closes the connection."""
        while await self.receive_some():
            pass
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    async def read_response(self, *, head_request: bool = False) -> RawResponse:
        """The next response (a 1xx interim response is returned on its own)."""
        head = (await self._read_until(b"\r\n\r\n")).decode("latin-1")
        status_line, *lines = head[:-4].split("\r\n")
        version, status_text, *reason = status_line.split(" ", 2)
        headers: list[tuple[str, str]] = []
        for line in lines:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        response = RawResponse(int(status_text), " ".join(reason), headers, b"", version)
        if head_request or response.status < 200 or response.status in (204, 304):
            return response
        transfer_encoding = response.header("transfer-encoding")
        length = response.header("content-length")
        if transfer_encoding is not None and "chunked" in transfer_encoding.lower():
            response.body = await self._read_chunked()
        elif length is not None:
            response.body = await self._read_exactly(int(length))
        else:
            response.body = await self.read_until_eof()
        return response

    async def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size_line = await self._read_until(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while await self._read_until(b"\r\n") != b"\r\n":  # trailers
                    pass
                return b"".join(parts)
            parts.append(await self._read_exactly(size))
            assert await self._read_exactly(2) == b"\r\n"


def simple_get(path: str = "/", host: str = "test", extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


async def fetch(host: str, port: int, request: bytes) -> tuple[RawResponse, RawConnection]:
    """Open a connection, send ``request`` in one write, read one response."""
    connection = await RawConnection.open(host, port)
    await connection.send(request)
    return await connection.read_response(), connection


def assert_error_body(response: RawResponse, status: int) -> dict[str, object]:
    """The response is ``status`` with the standard JSON error body."""
    assert response.status == status, (response.status, response.body)
    content_type = response.header("content-type") or ""
    assert content_type.split(";")[0].strip() == "application/json", content_type
    body = response.json()
    assert isinstance(body, dict), body
    assert body["status"] == status
    assert body["error"] == HTTPStatus(status).phrase
    assert isinstance(body["message"], str)
    return body
