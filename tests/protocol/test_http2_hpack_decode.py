"""The server's HPACK decoding (``BoundedDecoder``) held to hpack's own: a block of one-byte
indexed fields is read by a shorter path, and every block, valid or not, must come out as
hpack's decoder makes it (the same fields, or the same error) and leave the same table."""

from __future__ import annotations

from typing import Any

import hpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioframe._protocol.http2_decoder import BoundedDecoder

LIMIT = 600  # small enough for generated lists to cross it

_FIELDS = st.tuples(
    st.sampled_from([b":method", b":path", b":authority", b"accept", b"x-a", b"user-agent"]),
    st.sampled_from([b"GET", b"/", b"/plaintext", b"example.org", b"*/*", b""])
    | st.binary(max_size=60),
)
_BLOCKS = st.lists(st.lists(_FIELDS, max_size=8), min_size=1, max_size=8)


def outcome(decoder: hpack.Decoder, block: bytes) -> tuple[str, Any]:
    try:
        return "ok", decoder.decode(block, raw=True)
    except hpack.HPACKError as exc:
        return "error", type(exc)


def same_state(ours: hpack.Decoder, theirs: hpack.Decoder) -> bool:
    return (
        list(ours.header_table.dynamic_entries) == list(theirs.header_table.dynamic_entries)
        and ours.header_table.maxsize == theirs.header_table.maxsize
    )


def pair() -> tuple[BoundedDecoder, hpack.Decoder]:
    return BoundedDecoder(LIMIT), hpack.Decoder(max_header_list_size=LIMIT)


@given(_BLOCKS, st.sampled_from([4096, 256, 64]))
def test_a_connections_blocks_decode_as_hpacks(blocks: list[list[Any]], table: int) -> None:
    encoder = hpack.Encoder()
    encoder.header_table_size = table
    ours, theirs = pair()
    for fields in blocks * 2:  # the second time round, mostly indexed fields
        block = encoder.encode(fields)
        mine = outcome(ours, block)
        assert mine == outcome(theirs, block)
        assert all(type(field) is hpack.HeaderTuple for field in mine[1] if mine[0] == "ok")
        assert same_state(ours, theirs)


@given(_BLOCKS, st.lists(st.binary(max_size=12), max_size=6))
def test_any_bytes_decode_as_hpacks(primer: list[list[Any]], blocks: list[bytes]) -> None:
    encoder, ours, theirs = hpack.Encoder(), *pair()
    for fields in primer:  # a table with entries in it
        block = encoder.encode(fields)
        assert outcome(ours, block) == outcome(theirs, block)
    for block in blocks:
        if outcome(ours, block) != outcome(theirs, block):
            raise AssertionError(block)
        assert same_state(ours, theirs)


@given(st.lists(st.integers(0x80, 0xFF), max_size=40))
def test_indexed_bytes_decode_as_hpacks(indexes: list[int]) -> None:
    encoder, ours, theirs = hpack.Encoder(), *pair()
    primer = encoder.encode([(b"x-long", b"v" * 100), (b":authority", b"example.org")])
    ours.decode(primer, raw=True), theirs.decode(primer, raw=True)
    block = bytes(indexes)
    assert outcome(ours, block) == outcome(theirs, block)


def test_indexed_blocks_skip_hpacks_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = BoundedDecoder(LIMIT)
    first = hpack.Encoder()
    fields = [(b":method", b"GET"), (b":path", b"/x"), (b":authority", b"example.org")]
    decoder.decode(first.encode(fields), raw=True)
    again = first.encode(fields)
    assert all(byte > 0x80 for byte in again)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("hpack's loop ran")

    monkeypatch.setattr(hpack.Decoder, "decode", refuse)
    assert decoder.decode(again, raw=True) == fields
    assert decoder.blocks == 2


def test_a_list_past_the_limit_is_still_refused() -> None:
    encoder, decoder = hpack.Encoder(), BoundedDecoder(200)
    decoder.decode(encoder.encode([(b"x-big", b"v" * 150)]), raw=True)
    repeated = encoder.encode([(b"x-big", b"v" * 150)] * 2)
    assert repeated == b"\xbe\xbe"
    with pytest.raises(hpack.OversizedHeaderListError):
        decoder.decode(repeated, raw=True)
