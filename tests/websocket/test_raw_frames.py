"""The WebSocket server against hand-built frames over real loopback sockets: protocol errors
(1002, 1007) and the TCP close that follows them, the message size limit (1009) on whole,
fragmented and multi-byte messages, the ping flood rule, and permessage-deflate (negotiation,
the decompression cap against a compression bomb, compressed echoes).

The client is written out below rather than taken from a library, so that it can send what
no library would: unmasked frames, reserved opcodes, invalid UTF-8, a deflate bomb."""

from __future__ import annotations

import base64
import hashlib
import os
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import pytest
import trio

from trioframe import Message, Router, ServerConfig, WebSocketConnection
from trioframe._server.websocket import PING_FLOOD

from ..loopback._support import Served, serving

pytestmark = pytest.mark.loopback

# -- a raw WebSocket client --------------------------------------------------------------------
CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_SYNC_TAIL = b"\x00\x00\xff\xff"  # the end of a sync flush; RFC 7692 strips it from messages
#: Every test finishes well within this; it is shorter than ``websocket_close_timeout`` below,
#: so a TCP close seen in time is the server's doing, not the close timeout running out.
DEADLINE = 5.0


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


def close_payload(code: int, reason: str = "") -> bytes:
    return code.to_bytes(2, "big") + reason.encode()


def deflate(data: bytes, compressor: zlib._Compress | None = None) -> bytes:
    """``data`` as a permessage-deflate payload: raw deflate, sync flush, tail stripped."""
    compressor = compressor or zlib.compressobj(wbits=-15)
    out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(_SYNC_TAIL)
    return out[: -len(_SYNC_TAIL)]


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

    def __init__(self, stream: trio.SocketStream) -> None:
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
            await client._upgrade(f"{served.host}:{served.port}", path, extensions)
            yield client

    async def _upgrade(self, host: str, path: str, extensions: str | None) -> None:
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
            payload = inflater.decompress(payload + _SYNC_TAIL)
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


# -- the app -------------------------------------------------------------------------------------
async def echo(ws: WebSocketConnection) -> None:
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(text)
            case Message.Binary(data):
                await ws.send_bytes(data)
            case _:
                pass


ROUTER = Router().websocket("/echo", echo)
#: No keep-alive pings to get in the way; a close timeout far past ``DEADLINE``.
BASE = ServerConfig(websocket_ping_interval=600.0, websocket_close_timeout=60.0)
LIMIT = 1000


# -- protocol errors -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "code"),
    [
        pytest.param(frame(TEXT, b"hello", masked=False), 1002, id="unmasked"),
        pytest.param(frame(BINARY, b"", masked=False), 1002, id="unmasked-empty"),
        pytest.param(frame(0x3, b"x"), 1002, id="reserved-data-opcode"),
        pytest.param(frame(0xB), 1002, id="reserved-control-opcode"),
        pytest.param(frame(TEXT, b"x", rsv1=True), 1002, id="rsv1-without-extension"),
        pytest.param(frame(PING, b"p", fin=False), 1002, id="fragmented-ping"),
        pytest.param(frame(PING, b"p" * 126), 1002, id="ping-over-125-bytes"),
        pytest.param(frame(CONTINUATION, b"x"), 1002, id="continuation-without-start"),
        pytest.param(
            frame(TEXT, b"a", fin=False) + frame(TEXT, b"b"), 1002, id="new-message-mid-message"
        ),
        pytest.param(frame(TEXT, b"\xff"), 1007, id="invalid-byte"),
        pytest.param(frame(TEXT, b"ok \xc3\x28"), 1007, id="bad-continuation-byte"),
        pytest.param(frame(TEXT, b"\xc0\xaf"), 1007, id="overlong"),
        pytest.param(frame(TEXT, b"\xed\xa0\x80"), 1007, id="surrogate"),
        pytest.param(frame(TEXT, b"abc\xe2\x82"), 1007, id="truncated-at-message-end"),
        pytest.param(
            frame(TEXT, b"\xe2\x82", fin=False) + frame(CONTINUATION, b"A"),
            1007,
            id="invalid-across-fragments",
        ),
    ],
)
async def test_a_protocol_error_closes_with_its_code_then_drops_tcp(data: bytes, code: int) -> None:
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, BASE) as served:
            async with WsClient.connect(served) as client:
                await client.assert_echoes("before")
                await client.send(data)
                await client.expect_failure(code)
            # the server keeps serving: a new connection echoes
            async with WsClient.connect(served) as client:
                await client.assert_echoes()


async def test_utf8_split_between_fragments_is_reassembled() -> None:
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, BASE) as served, WsClient.connect(served) as client:
            await client.send(frame(TEXT, b"price: \xe2\x82", fin=False))
            await client.send(frame(CONTINUATION, b"\xac 5"))
            assert await client.read_message() == Frame(True, False, TEXT, "price: € 5".encode())


# -- the message size limit ------------------------------------------------------------------------
SIZE_LIMITED = attrs.evolve(BASE, websocket_max_message_size=LIMIT)


@pytest.mark.parametrize("size", [LIMIT - 1, LIMIT])
async def test_messages_up_to_the_limit_are_echoed(size: int) -> None:
    binary = os.urandom(size)
    text = "t" * size
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served, WsClient.connect(served) as client:
            await client.send(frame(BINARY, binary))
            assert await client.read_message() == Frame(True, False, BINARY, binary)
            await client.send(frame(TEXT, text.encode()))
            assert await client.read_message() == Frame(True, False, TEXT, text.encode())
            # the same sizes in fragments
            await client.send(
                frame(BINARY, binary[:400], fin=False)
                + frame(CONTINUATION, binary[400:800], fin=False)
                + frame(CONTINUATION, binary[800:])
            )
            assert await client.read_message() == Frame(True, False, BINARY, binary)


@pytest.mark.parametrize("opcode", [BINARY, TEXT])
async def test_a_message_one_byte_over_the_limit_is_1009(opcode: int) -> None:
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served:
            async with WsClient.connect(served) as client:
                await client.send(frame(opcode, b"x" * (LIMIT + 1)))
                await client.expect_failure(1009)
            async with WsClient.connect(served) as client:
                await client.assert_echoes()


async def test_fragments_whose_running_total_crosses_the_limit_are_1009() -> None:
    """The limit is on the message, not the frame: fragments of 400 bytes each fail on the
    third, before the message is finished (no final fragment is ever sent)."""
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served:
            async with WsClient.connect(served) as client:
                await client.send(frame(BINARY, b"a" * 400, fin=False))
                await client.send(frame(CONTINUATION, b"b" * 400, fin=False))
                await client.send(frame(CONTINUATION, b"c" * 400, fin=False))
                await client.expect_failure(1009)
            async with WsClient.connect(served) as client:
                await client.assert_echoes()


@pytest.mark.parametrize(("char", "count"), [("é", 501), ("€", 334), ("😀", 251)])
async def test_text_counts_utf8_bytes_not_characters(char: str, count: int) -> None:
    """``count`` characters (well under the limit) that take just over ``LIMIT`` bytes."""
    encoded = (char * count).encode()
    assert count < LIMIT < len(encoded)
    fitting = (char * (LIMIT // len(char.encode()))).encode()
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served, WsClient.connect(served) as client:
            await client.send(frame(TEXT, fitting))
            assert await client.read_message() == Frame(True, False, TEXT, fitting)
            await client.send(frame(TEXT, encoded))
            await client.expect_failure(1009)


async def test_fragmented_multibyte_text_over_the_limit_is_1009() -> None:
    """30 fragments of 10 four-byte characters: 300 characters, but 1200 bytes against a
    1000-byte limit. Each piece alone is far under it; the running total in bytes is not."""
    piece = ("😀" * 10).encode()
    fragments = [
        frame(TEXT if index == 0 else CONTINUATION, piece, fin=index == 29) for index in range(30)
    ]
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served, WsClient.connect(served) as client:
            await client.send(b"".join(fragments[:-1]))  # 1160 bytes, still unfinished
            await client.expect_failure(1009)


async def test_fragmented_multibyte_text_at_the_limit_is_echoed() -> None:
    """250 four-byte characters in 25 fragments: exactly the limit in bytes."""
    piece = ("😀" * 10).encode()
    fragments = [
        frame(TEXT if index == 0 else CONTINUATION, piece, fin=index == 24) for index in range(25)
    ]
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, SIZE_LIMITED) as served, WsClient.connect(served) as client:
            await client.send(b"".join(fragments))
            echoed = await client.read_message()
            assert echoed == Frame(True, False, TEXT, ("😀" * 250).encode())


# -- pings -------------------------------------------------------------------------------------
def _pings(count: int) -> tuple[list[bytes], bytes]:
    payloads = [f"ping {index:03}".encode() for index in range(count)]
    return payloads, b"".join(frame(PING, payload) for payload in payloads)


async def test_every_ping_of_a_read_up_to_the_flood_limit_is_answered_in_order() -> None:
    payloads, data = _pings(PING_FLOOD)
    assert len(data) < 1024  # one small write: one read on loopback
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, BASE) as served, WsClient.connect(served) as client:
            await client.send(data)
            pongs = [await client.read_frame() for _ in payloads]
            assert pongs == [Frame(True, False, PONG, payload) for payload in payloads]
            await client.assert_echoes()  # the next frame is the echo: no extra pongs


async def test_a_ping_flood_gets_one_pong_for_the_last_ping() -> None:
    payloads, data = _pings(PING_FLOOD + 5)
    assert len(data) < 1024
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, BASE) as served, WsClient.connect(served) as client:
            await client.send(data)
            assert await client.read_frame() == Frame(True, False, PONG, payloads[-1])
            await client.assert_echoes()  # only that one pong; the connection still works
            await client.send(frame(PING, b"single"))
            assert await client.read_frame() == Frame(True, False, PONG, b"single")


# -- permessage-deflate ---------------------------------------------------------------------------
DEFLATE_LIMIT = 64 * 1024
COMPRESSED = attrs.evolve(
    BASE, websocket_compression=True, websocket_max_message_size=DEFLATE_LIMIT
)


@pytest.mark.parametrize("enabled", [False, True])
async def test_permessage_deflate_is_accepted_only_when_enabled(enabled: bool) -> None:
    config = ServerConfig(websocket_compression=True) if enabled else ServerConfig()
    with trio.fail_after(DEADLINE):
        async with (
            serving(ROUTER, config) as served,
            WsClient.connect(served, extensions="permessage-deflate") as client,
        ):
            answer = client.headers.get("sec-websocket-extensions")
            if enabled:
                assert answer is not None
                assert answer.split(";")[0].strip() == "permessage-deflate"
            else:
                assert answer is None
                # and a compressed frame is then a protocol error
                await client.send(frame(TEXT, deflate(b"hello"), rsv1=True))
                await client.expect_failure(1002)


def _zeros_bomb(size: int) -> bytes:
    """``size`` zero bytes deflated in 1 MiB steps (the inflated message never exists here)."""
    compressor = zlib.compressobj(wbits=-15)
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(size // len(chunk))]
    parts.append(compressor.flush(zlib.Z_SYNC_FLUSH))
    data = b"".join(parts)
    assert data.endswith(_SYNC_TAIL)
    return data[: -len(_SYNC_TAIL)]


async def test_a_compression_bomb_is_1009_without_inflating_it() -> None:
    inflated_size = 10 * 1024 * 1024
    bomb = frame(BINARY, _zeros_bomb(inflated_size), rsv1=True)
    assert len(bomb) < 20 * 1024  # ~10 KB on the wire
    with trio.fail_after(DEADLINE):
        async with serving(ROUTER, COMPRESSED) as served:
            async with WsClient.connect(served, extensions="permessage-deflate") as client:
                assert "sec-websocket-extensions" in client.headers
                tracemalloc.start()
                try:
                    await client.send(bomb)
                    await client.expect_failure(1009)
                    _, peak = tracemalloc.get_traced_memory()
                finally:
                    tracemalloc.stop()
                # the server inflated at most about the limit, not the 10 MiB
                assert peak < inflated_size // 4, peak
            async with WsClient.connect(served) as client:  # uncompressed: plain echoes
                await client.assert_echoes()


def _compressible(size: int) -> bytes:
    return (b"trioframe websocket " * (size // 20 + 1))[:size]


@pytest.mark.parametrize("size", [DEFLATE_LIMIT - 1, DEFLATE_LIMIT])
async def test_a_compressed_message_within_the_limit_is_echoed(size: int) -> None:
    data = _compressible(size)
    compressor = zlib.compressobj(wbits=-15)  # one context for the connection (takeover)
    inflater = zlib.decompressobj(wbits=-15)
    with trio.fail_after(DEADLINE):
        async with (
            serving(ROUTER, COMPRESSED) as served,
            WsClient.connect(served, extensions="permessage-deflate") as client,
        ):
            for _ in range(2):  # twice: the second relies on both sides' sliding windows
                await client.send(frame(BINARY, deflate(data, compressor), rsv1=True))
                assert await client.read_message(inflater) == Frame(True, False, BINARY, data)
            payload = deflate(data, compressor)  # in three fragments, RSV1 on the first only
            third = len(payload) // 3
            await client.send(
                frame(BINARY, payload[:third], fin=False, rsv1=True)
                + frame(CONTINUATION, payload[third : 2 * third], fin=False)
                + frame(CONTINUATION, payload[2 * third :])
            )
            assert await client.read_message(inflater) == Frame(True, False, BINARY, data)


@pytest.mark.parametrize("fragments", [1, 3])
async def test_a_compressed_message_one_byte_over_the_limit_is_1009(fragments: int) -> None:
    payload = deflate(_compressible(DEFLATE_LIMIT + 1))
    step = len(payload) // fragments + 1
    pieces = [payload[start : start + step] for start in range(0, len(payload), step)]
    assert len(pieces) == fragments
    data = b"".join(
        frame(
            BINARY if index == 0 else CONTINUATION,
            piece,
            fin=index == len(pieces) - 1,
            rsv1=index == 0,
        )
        for index, piece in enumerate(pieces)
    )
    with trio.fail_after(DEADLINE):
        async with (
            serving(ROUTER, COMPRESSED) as served,
            WsClient.connect(served, extensions="permessage-deflate") as client,
        ):
            await client.send(data)
            await client.expect_failure(1009)
