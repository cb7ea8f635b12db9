"""A WebSocket client written out by hand, for tests that must send what no library would:
unmasked frames, reserved opcodes, invalid UTF-8, a deflate bomb, a message and a broken frame
in one write. It speaks over any ``trio.abc.Stream``: a loopback socket or an in-memory pair
(``in_memory``). ``echo`` is the handler it is usually pointed at."""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import attrs
import trio
import trio.testing

from trioframe import Message, Router, ServerConfig, WebSocketConnection
from trioframe.testing import TestClient

from ..loopback._support import Served

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SYNC_TAIL = b"\x00\x00\xff\xff"  # the end of a sync flush; RFC 7692 strips it from messages


def frame(
    opcode: int,
    payload: bytes = b"",
    *,
    fin: bool = True,
    rsv1: bool = False,
    masked: bool = True,
) -> bytes:
    """One frame as a client sends it (masked unless ``masked=False``)."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    mask_bit = 0x80 if masked else 0
    size = len(payload)
    if size < 126:
        header = bytes([first, mask_bit | size])
    elif size < 1 << 16:
        header = bytes([first, mask_bit | 126]) + size.to_bytes(2, "big")
    else:
        header = bytes([first, mask_bit | 127]) + size.to_bytes(8, "big")
    if not masked:
        return header + payload
    key = os.urandom(4)
    stream = (key * (size // 4 + 1))[:size]
    body = (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(size, "big")
    return header + key + body


def deflate(data: bytes, compressor: zlib._Compress | None = None) -> bytes:
    """``data`` as a permessage-deflate payload: raw deflate, sync flush, tail stripped."""
    compressor = compressor or zlib.compressobj(wbits=-15)
    out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(SYNC_TAIL)
    return out[: -len(SYNC_TAIL)]


@attrs.frozen
class Frame:
    """A frame as the server sent it."""

    fin: bool
    rsv1: bool
    opcode: int
    payload: bytes

    @property
    def close_code(self) -> int:
        assert self.opcode == CLOSE, self
        return int.from_bytes(self.payload[:2], "big")


class WsClient:
    """One client connection: the upgrade done by hand, then frames in and out."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._buffer = bytearray()
        self.headers: dict[str, str] = {}

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, served: Served, path: str = "/echo", extensions: str | None = None
    ) -> AsyncIterator[WsClient]:
        """Open a connection, upgrade it (asserting the 101), close it on exit."""
        client = cls(await trio.open_tcp_stream(served.host, served.port))
        async with client.stream:
            await client.upgrade(f"{served.host}:{served.port}", path, extensions)
            yield client

    async def upgrade(self, host: str, path: str, extensions: str | None = None) -> None:
        """The opening handshake, asserting the 101 and its ``Sec-WebSocket-Accept``."""
        key = base64.b64encode(os.urandom(16))
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
        ]
        if extensions is not None:
            lines.append(f"Sec-WebSocket-Extensions: {extensions}")
        await self.send("\r\n".join(lines).encode() + b"\r\n\r\n")
        while (end := self._buffer.find(b"\r\n\r\n")) == -1:
            assert await self._fill(), f"EOF during the handshake: {bytes(self._buffer)!r}"
        head = self._buffer[:end].decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        assert head[0].startswith("HTTP/1.1 101 "), head
        for line in head[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        expected = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        assert self.headers["sec-websocket-accept"] == expected

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def _fill(self) -> bool:
        """Read more into the buffer; ``False`` at EOF (a reset counts as one)."""
        try:
            data = await self.stream.receive_some(65536)
        except trio.BrokenResourceError:
            data = b""
        self._buffer += data
        return bool(data)

    async def _take(self, size: int) -> bytes:
        while len(self._buffer) < size:
            assert await self._fill(), f"EOF after {len(self._buffer)} of {size} bytes"
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def read_frame(self) -> Frame:
        first, second = await self._take(2)
        assert not second & 0x80, "a server must not mask its frames"
        size = second & 0x7F
        if size == 126:
            size = int.from_bytes(await self._take(2), "big")
        elif size == 127:
            size = int.from_bytes(await self._take(8), "big")
        assert not first & 0x30, "RSV2/RSV3 set by the server"
        return Frame(bool(first & 0x80), bool(first & 0x40), first & 0x0F, await self._take(size))

    async def read_frame_or_eof(self) -> Frame | None:
        """The next frame, or ``None`` when the stream ends between frames."""
        if not self._buffer and not await self._fill():
            return None
        return await self.read_frame()

    async def read_message(self, inflater: zlib._Decompress | None = None) -> Frame:
        """A whole data message (continuations joined; inflated if it came compressed)."""
        start = await self.read_frame()
        assert start.opcode in (TEXT, BINARY), start
        parts = [start.payload]
        last = start
        while not last.fin:
            last = await self.read_frame()
            assert last.opcode == CONTINUATION, last
            parts.append(last.payload)
        payload = b"".join(parts)
        if start.rsv1:
            assert inflater is not None, "a compressed message on an uncompressed connection"
            payload = inflater.decompress(payload + SYNC_TAIL)
        return Frame(True, False, start.opcode, payload)

    async def expect_failure(self, code: int) -> None:
        """The server sends Close with ``code``, nothing after it, and closes the TCP
        connection without waiting for our Close reply."""
        close = await self.read_frame()
        assert close.opcode == CLOSE, close
        assert close.close_code == code, close
        while await self._fill():
            pass
        assert self._buffer == b"", f"bytes after the Close: {bytes(self._buffer)!r}"

    async def assert_echoes(self, text: str = "still here") -> None:
        await self.send(frame(TEXT, text.encode()))
        echoed = await self.read_frame()
        assert echoed == Frame(True, False, TEXT, text.encode())


async def echo(ws: WebSocketConnection) -> None:
    """Text back as text, binary as binary; other messages ignored."""
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(text)
            case Message.Binary(data):
                await ws.send_bytes(data)
            case _:
                pass


@asynccontextmanager
async def in_memory(
    handler: Callable[[WebSocketConnection], Awaitable[None]], config: ServerConfig
) -> AsyncIterator[WsClient]:
    """``handler`` on ``/ws`` behind the real connection code, a raw client upgraded to it
    over an in-memory stream pair."""
    test_client = TestClient(Router().websocket("/ws", handler), config)
    async with test_client, trio.open_nursery() as nursery:
        client_end, server_end = trio.testing.memory_stream_pair()
        nursery.start_soon(test_client.server.handle_stream, server_end, ("127.0.0.1", 9))
        client = WsClient(client_end)
        await client.upgrade("testserver", "/ws")
        yield client
        nursery.cancel_scope.cancel()
