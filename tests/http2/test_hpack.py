"""HPACK (RFC 7541, RFC 9113 section 4.3): a header block that cannot be decoded ends the
connection with COMPRESSION_ERROR; a "bomb" (a large dynamic-table entry referenced many
times: a few bytes on the wire, a huge header list decoded) is cut off at twice
``http2_max_header_list_size`` with ENHANCE_YOUR_CALM, and answered 431 below that."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    COMPRESSION_ERROR,
    ENHANCE_YOUR_CALM,
    HEADERS,
    RawPeer,
    connect,
    frame,
    h2_config,
    h2_server,
    request_fields,
)

UNDECODABLE = {
    "index beyond the tables": b"\xff\x80\x01",  # indexed field 255 + 128: no such entry
    "table size over the setting": b"\x3f\xe1\x3f",  # a size update to 8192 > 4096
    "truncated integer": b"\x82\x86\x84\x41\xff",  # a name length that never ends
    "string longer than the block": b"\x82\x86\x84\x41\x0aabc",
    "invalid huffman": b"\x82\x86\x84\x41\x81\xff",
}


@pytest.mark.parametrize("case", list(UNDECODABLE))
async def test_a_header_block_that_fails_to_decode_is_a_compression_error(
    case: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1)
        assert (await peer.response(1)).status == 200
        await peer.send(frame(HEADERS, 0x5, 3, UNDECODABLE[case]))
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(1, COMPRESSION_ERROR)]


def literal(name: bytes, value: bytes) -> bytes:
    """A literal field without indexing, new name, no Huffman (RFC 7541 section 6.2.2);
    lengths under 127 for the name, any for the value."""
    return b"\x00" + bytes([len(name)]) + name + hpack_int(len(value), 7) + value


def hpack_int(value: int, prefix: int) -> bytes:
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([value])
    out, value = bytearray([limit]), value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


async def bomb(peer: RawPeer, stream_id: int, references: int, size: int) -> int:
    """Send a request whose header list decodes to exactly ``size`` bytes, most of it
    ``references`` references to the dynamic-table entry ``x-bomb: a * 968`` (6 + 968 + 32 =
    1006 bytes); returns its size on the wire."""
    fields = request_fields(b"GET", b"/")
    pseudo = sum(len(n) + len(v) + 32 for n, v in fields)
    pad = size - pseudo - references * 1006 - len(b"x-pad") - 32
    assert pad >= 0
    block = peer.block(fields)  # the table already holds the entry: at index 62
    block += b"\xbe" * references + literal(b"x-pad", b"p" * pad)
    await peer.send(frame(HEADERS, 0x5, stream_id, block))
    return len(block)


@pytest.mark.parametrize("extra", [-1, 0, 1])
async def test_an_hpack_bomb_is_cut_off_past_twice_the_header_list_limit(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    limit = 8000
    config = h2_config(http2_max_header_list_size=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, headers=[(b"x-bomb", b"a" * 968)])  # enters the table
        assert (await peer.response(1)).status == 200
        wire = await bomb(peer, 3, 15, 2 * limit + extra)
        assert wire * 10 < 2 * limit  # 16 KB decoded from a tenth of it sent
        if extra > 0:
            await peer.closed()
            assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
                (1, ENHANCE_YOUR_CALM)
            ]
            return
        assert (await peer.response(3)).status == 431
        await peer.request(5)
        assert (await peer.response(5)).status == 200


async def test_a_large_bomb_stops_early(autojump_clock: trio.testing.MockClock) -> None:
    async with h2_server(router(Lab())) as (server, nursery):  # the default 32 KiB limit
        peer = await connect(server, nursery)
        await peer.request(1, headers=[(b"x-bomb", b"a" * 968)])
        assert (await peer.response(1)).status == 200
        block = peer.block(request_fields(b"GET", b"/")) + b"\xbe" * 15_000  # 15 MB decoded
        await peer.send(frame(HEADERS, 0x5, 3, block))
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
