"""HPACK encoding of response heads without the dynamic table (``FieldEncoder``): what any
decoder reads back is what hpack's own encoder would have made it read, the decoder's dynamic
table stays empty, secrets are never indexed, and the table size updates h2 asks for open the
next block."""

from __future__ import annotations

import hpack
from hypothesis import given
from hypothesis import strategies as st

from trioframe._protocol import http2_encoder
from trioframe._protocol.http2_encoder import FieldEncoder

_NAMES = st.sampled_from(
    [
        b":status",
        b"content-type",
        b"content-length",
        b"date",
        b"server",
        b"set-cookie",
        b"x-request-id",
        b"cache-control",
        b"vary",
        b"authorization",
    ]
) | st.binary(min_size=1, max_size=20).map(lambda name: name.lower())
_VALUES = st.sampled_from([b"200", b"404", b"text/plain", b"gzip, deflate", b""]) | st.binary(
    max_size=200
)
_HEADS = st.lists(st.lists(st.tuples(_NAMES, _VALUES), max_size=12), min_size=1, max_size=6)


@given(_HEADS)
def test_decodes_as_hpacks_own_encoding(heads: list[list[tuple[bytes, bytes]]]) -> None:
    ours, theirs = FieldEncoder(), hpack.Encoder()
    our_decoder, their_decoder = hpack.Decoder(), hpack.Decoder()
    for head in heads:  # one connection: the blocks in order
        decoded = our_decoder.decode(ours.encode(head), raw=True)
        assert decoded == their_decoder.decode(theirs.encode(head), raw=True) == head
        assert len(our_decoder.header_table.dynamic_entries) == 0


def test_static_fields_take_one_byte_and_others_are_literals_without_indexing() -> None:
    block = FieldEncoder().encode([(b":status", b"200"), (b"content-type", b"text/plain")])
    assert block[0] == 0x88  # :status 200, static index 8
    assert block[1] >> 4 == 0  # literal without indexing, name index 31 (content-type)
    assert block[1] & 0x0F == 0x0F and block[2] == 31 - 15


def test_secrets_are_never_indexed_and_never_cached() -> None:
    encoder = FieldEncoder()
    block = encoder.encode([(b"set-cookie", b"session=secret")])
    assert block[0] >> 4 == 1  # literal never indexed (RFC 7541 section 6.2.3)
    never = hpack.NeverIndexedHeaderTuple(b"x-token", b"abc")
    assert encoder.encode([never])[0] >> 4 == 1
    decoded = hpack.Decoder().decode(block, raw=True)
    assert decoded == [(b"set-cookie", b"session=secret")]
    assert isinstance(decoded[0], hpack.NeverIndexedHeaderTuple)
    assert all(name != b"set-cookie" for name, _ in http2_encoder._cache)
    assert all(name != b"x-token" for name, _ in http2_encoder._cache)


def test_a_table_size_change_opens_the_next_block_once() -> None:
    encoder, decoder = FieldEncoder(), hpack.Decoder()
    encoder.header_table_size = 256  # what h2 does on the client's SETTINGS_HEADER_TABLE_SIZE
    decoder.max_allowed_table_size = 256
    first = encoder.encode([(b":status", b"200")])
    assert first[0] >> 5 == 1  # a dynamic table size update
    assert decoder.decode(first, raw=True) == [(b":status", b"200")]
    assert decoder.header_table.maxsize == 256
    assert encoder.encode([(b":status", b"200")]) == b"\x88"


def test_the_cache_stays_bounded() -> None:
    encoder = FieldEncoder()
    for n in range(3 * http2_encoder.CACHE_SIZE):
        encoder.encode([(b"content-length", b"%d" % n)])
    assert len(http2_encoder._cache) <= http2_encoder.CACHE_SIZE
