"""The WebSocket server against hand-built frames over real loopback sockets: protocol errors
(1002, 1007) and the TCP close that follows them, the message size limit (1009) on whole,
fragmented and multi-byte messages, the ping flood rule, and permessage-deflate (negotiation,
the decompression cap against a compression bomb, compressed echoes).

The client (``_raw_client``) is written out by hand rather than taken from a library, so that it
can send what no library would: unmasked frames, reserved opcodes, invalid UTF-8, a deflate
bomb."""

from __future__ import annotations

import os
import tracemalloc
import zlib

import attrs
import pytest
import trio

from trioframe import Router, ServerConfig
from trioframe._server.websocket import PING_FLOOD

from ..loopback._support import serving
from ._raw_client import (
    BINARY,
    CONTINUATION,
    PING,
    PONG,
    SYNC_TAIL,
    TEXT,
    Frame,
    WsClient,
    deflate,
    echo,
    frame,
)

pytestmark = pytest.mark.loopback
#: Every test finishes well within this; it is shorter than ``websocket_close_timeout`` below,
#: so a TCP close seen in time is the server's doing, not the close timeout running out.
DEADLINE = 5.0

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
    assert data.endswith(SYNC_TAIL)
    return data[: -len(SYNC_TAIL)]


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
