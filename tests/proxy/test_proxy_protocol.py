"""The PROXY protocol: v1 and v2 headers parsed from byte fixtures, ``header_length`` on every
prefix (it must never ask for more of a bad header), and random bytes."""

from __future__ import annotations

import contextlib
import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._proxy import (
    V1_MAX,
    V2_SIGNATURE,
    ProxyHeader,
    ProxyProtocolError,
    header_length,
    parse_header,
)

REQUEST = b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
LONGEST_V1 = (
    b"PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
    b" ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
)


def v2(version_command: int, family: int, body: bytes) -> bytes:
    """A v2 header: signature, version and command, family, length, then ``body``."""
    return V2_SIGNATURE + bytes([version_command, family]) + len(body).to_bytes(2, "big") + body


def tlv(kind: int, value: bytes) -> bytes:
    return bytes([kind]) + len(value).to_bytes(2, "big") + value


def ipv4(text: str) -> bytes:
    return ipaddress.IPv4Address(text).packed


def ipv6(text: str) -> bytes:
    return ipaddress.IPv6Address(text).packed


def ports(source: int, destination: int) -> bytes:
    return source.to_bytes(2, "big") + destination.to_bytes(2, "big")


TCP4_BODY = ipv4("192.0.2.1") + ipv4("198.51.100.2") + ports(56324, 443)
TCP6_BODY = ipv6("2001:db8::1") + ipv6("2001:db8::2") + ports(56324, 443)
UNIX_BODY = b"/run/client.sock".ljust(108, b"\0") + b"/run/server.sock".ljust(108, b"\0")
TCP4_HEADER = ProxyHeader(("192.0.2.1", 56324), ("198.51.100.2", 443))
TCP6_HEADER = ProxyHeader(("2001:db8::1", 56324), ("2001:db8::2", 443))
NO_ADDRESS = ProxyHeader(None, None)

VALID = [
    # version 1
    (b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", TCP4_HEADER),
    (b"PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n", TCP6_HEADER),
    (b"PROXY TCP6 2001:DB8:0:0:0:0:0:1 2001:db8::2 56324 443\r\n", TCP6_HEADER),
    (
        b"PROXY TCP6 ::ffff:192.0.2.1 ::ffff:198.51.100.2 56324 443\r\n",
        TCP4_HEADER,
    ),
    (
        b"PROXY TCP4 0.0.0.0 255.255.255.255 0 65535\r\n",
        ProxyHeader(("0.0.0.0", 0), ("255.255.255.255", 65535)),
    ),
    (b"PROXY UNKNOWN\r\n", NO_ADDRESS),
    (b"PROXY UNKNOWN 192.0.2.1 whatever\r\n", NO_ADDRESS),
    (LONGEST_V1, NO_ADDRESS),
    # version 2, written out byte by byte once...
    (
        bytes.fromhex("0d0a0d0a000d0a515549540a 21 11 000c c0000201 c6336402 dc04 01bb"),
        TCP4_HEADER,
    ),
    # ...and built
    (v2(0x21, 0x11, TCP4_BODY), TCP4_HEADER),
    (v2(0x21, 0x21, TCP6_BODY), TCP6_HEADER),
    (
        v2(0x21, 0x21, ipv6("::ffff:192.0.2.1") + ipv6("::ffff:198.51.100.2") + ports(56324, 443)),
        TCP4_HEADER,
    ),
    (v2(0x21, 0x31, UNIX_BODY), NO_ADDRESS),
    (v2(0x21, 0x00, b""), NO_ADDRESS),
    (v2(0x21, 0x00, b"\xff\xff anything"), NO_ADDRESS),
    (v2(0x20, 0x00, b""), NO_ADDRESS),  # LOCAL: a health check from the proxy itself
    (v2(0x20, 0x11, TCP4_BODY), NO_ADDRESS),  # LOCAL ignores the addresses
    (v2(0x20, 0x12, b"\x00"), NO_ADDRESS),  # ...and the family
    # TLVs after the addresses are checked and skipped: ALPN, an AWS VPC endpoint, a NOOP.
    (
        v2(0x21, 0x11, TCP4_BODY + tlv(0x01, b"h2") + tlv(0xEA, b"\x01vpce-0123") + tlv(0x04, b"")),
        TCP4_HEADER,
    ),
    (v2(0x21, 0x21, TCP6_BODY + tlv(0x20, b"\x01" + b"\0" * 4)), TCP6_HEADER),
    (v2(0x21, 0x31, UNIX_BODY + tlv(0x05, b"unique-id")), NO_ADDRESS),
    (v2(0x21, 0x11, TCP4_BODY + tlv(0x04, b"\0" * 65000)), TCP4_HEADER),
]
VALID_IDS = [f"{fixture[:30]!r}...{len(fixture)}" for fixture, _ in VALID]


@pytest.mark.parametrize(("fixture", "expected"), VALID, ids=VALID_IDS)
def test_valid_headers_parse(fixture: bytes, expected: ProxyHeader) -> None:
    assert header_length(fixture) == len(fixture)
    assert header_length(fixture + REQUEST) == len(fixture)
    assert parse_header(fixture) == expected


@pytest.mark.parametrize(("fixture", "expected"), VALID, ids=VALID_IDS)
def test_header_length_on_every_prefix(fixture: bytes, expected: ProxyHeader) -> None:
    # A v1 length is known at its CRLF, a v2 one from its fixed 16 bytes on.
    known_at = 16 if fixture.startswith(V2_SIGNATURE) else len(fixture)
    for size in range(min(len(fixture), 300) + 1):
        length = header_length(fixture[:size])
        assert length == (len(fixture) if size >= known_at else None), size


def test_the_longest_v1_line_is_accepted_and_no_longer() -> None:
    assert len(LONGEST_V1) == V1_MAX == 107
    too_long = LONGEST_V1[:-2] + b"0\r\n"
    with pytest.raises(ProxyProtocolError, match="longer"):
        header_length(too_long)
    with pytest.raises(ProxyProtocolError, match="longer"):
        header_length(b"PROXY " + b"x" * 102)  # 108 bytes, no CRLF
    # Refused as soon as no CRLF can end the line in time.
    assert header_length(b"PROXY " + b"x" * 99) is None
    with pytest.raises(ProxyProtocolError):
        header_length(b"PROXY " + b"x" * 100)


def _first_failure(data: bytes) -> int:
    """The shortest prefix of ``data`` that ``header_length`` refuses; every shorter prefix
    must be answered with ``None`` (never a length: ``data`` is bad)."""
    for size in range(len(data) + 1):
        try:
            assert header_length(data[:size]) is None, size
        except ProxyProtocolError:
            return size
    raise AssertionError("never refused")


@pytest.mark.parametrize(
    ("data", "refused_at"),
    [
        (REQUEST, 1),  # a proxy configured without the protocol: refused at once
        (b"\x16\x03\x01\x02\x00", 1),  # a TLS ClientHello
        (b"PRI * HTTP/2.0\r\n", 3),
        (b"PROXY\r\n", 6),
        (b"PROXYTCP4", 6),
        (b"PROXY TCP4 192.0.2.1\n", 21),  # a bare LF
        (b"PROXY TCP4\r192.0.2.1", 12),  # a bare CR
        (b"\r\n\r\n\x00\r\nQUIT\r", 12),  # the v2 signature, diverging in its last byte
        (b"\r\n\r\n\x01", 5),
        (b"\r\n\r\x00", 4),
        (V2_SIGNATURE + b"\x11", 13),  # version 1
        (V2_SIGNATURE + b"\x31", 13),  # version 3
        (V2_SIGNATURE + b"\x22", 13),  # command 2
        (V2_SIGNATURE + b"\x2f", 13),
        (V2_SIGNATURE + b"\x21\x12", 14),  # UDP over IPv4
        (V2_SIGNATURE + b"\x21\x22", 14),  # UDP over IPv6
        (V2_SIGNATURE + b"\x21\x32", 14),  # Unix datagram
        (V2_SIGNATURE + b"\x21\x41", 14),
        (V2_SIGNATURE + b"\x21\x11\x00\x0b", 16),  # too short for two IPv4 addresses
        (V2_SIGNATURE + b"\x21\x21\x00\x23", 16),
        (V2_SIGNATURE + b"\x21\x31\x00\xd7", 16),
    ],
)
def test_header_length_refuses_bad_bytes_as_soon_as_they_arrive(
    data: bytes, refused_at: int
) -> None:
    assert _first_failure(data) == refused_at


@pytest.mark.parametrize(
    "line",
    [
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 \r\n",  # a trailing space
        b"PROXY TCP4  192.0.2.1 198.51.100.2 56324 443\r\n",  # two spaces
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 80\r\n",
        b"PROXY TCP4 2001:db8::1 2001:db8::2 56324 443\r\n",  # family and address disagree
        b"PROXY TCP6 192.0.2.1 198.51.100.2 56324 443\r\n",
        b"PROXY TCP4 192.0.2.1 ::ffff:198.51.100.2 56324 443\r\n",
        b"PROXY TCP5 192.0.2.1 198.51.100.2 56324 443\r\n",
        b"PROXY tcp4 192.0.2.1 198.51.100.2 56324 443\r\n",
        b"PROXY TCP4 192.0.2.001 198.51.100.2 56324 443\r\n",
        b"PROXY TCP4 192.0.2 198.51.100.2 56324 443\r\n",
        b"PROXY TCP6 fe80::1%eth0 2001:db8::2 56324 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 056324 443\r\n",  # a leading zero
        b"PROXY TCP4 192.0.2.1 198.51.100.2 00 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 -1 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 +1 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 1e3 443\r\n",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 \xd9\xa1 443\r\n",  # an Arabic-Indic digit
        b"PROXY TCP4 192.0.2.\xff 198.51.100.2 1 443\r\n",
        b"PROXY TCP4\t192.0.2.1 198.51.100.2 56324 443\r\n",
        b"PROXY \r\n",
        b"PROXY UNKNOW\r\n",
    ],
)
def test_invalid_v1_lines(line: bytes) -> None:
    assert header_length(line) == len(line)  # the framing is fine: the content is not
    with pytest.raises(ProxyProtocolError):
        parse_header(line)


@pytest.mark.parametrize(
    "header",
    [
        v2(0x21, 0x11, TCP4_BODY + b"\x01\x00"),  # a truncated TLV header
        v2(0x21, 0x11, TCP4_BODY + b"\x01"),
        v2(0x21, 0x11, TCP4_BODY + b"\x01\x00\x05abc"),  # a TLV longer than the header
        v2(0x21, 0x11, TCP4_BODY + tlv(0x01, b"h2") + b"\xea\x00"),
        v2(0x21, 0x21, TCP6_BODY + b"\x04\xff\xff"),
        v2(0x21, 0x31, UNIX_BODY + b"\x04"),
    ],
)
def test_malformed_tlvs_are_refused(header: bytes) -> None:
    assert header_length(header) == len(header)
    with pytest.raises(ProxyProtocolError, match="TLV"):
        parse_header(header)


@pytest.mark.parametrize(
    "header",
    [
        v2(0x21, 0x12, TCP4_BODY),  # UDP
        v2(0x21, 0x22, TCP6_BODY),
        v2(0x21, 0x32, UNIX_BODY),
        v2(0x11, 0x11, TCP4_BODY),  # version 1 in a v2 header
        v2(0x22, 0x11, TCP4_BODY),  # command 2
        v2(0x21, 0x11, TCP4_BODY[:11]),
    ],
)
def test_unsupported_v2_headers_are_refused(header: bytes) -> None:
    with pytest.raises(ProxyProtocolError):
        header_length(header)
    with pytest.raises(ProxyProtocolError):
        parse_header(header)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r",  # incomplete
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET",  # more than one header
        v2(0x21, 0x11, TCP4_BODY)[:-1],
        v2(0x21, 0x11, TCP4_BODY) + b"\0",
        V2_SIGNATURE,
    ],
)
def test_parse_header_wants_exactly_one_whole_header(data: bytes) -> None:
    with pytest.raises(ProxyProtocolError):
        parse_header(data)


def test_the_error_is_a_value_error() -> None:
    assert issubclass(ProxyProtocolError, ValueError)


# -- random bytes ----------------------------------------------------------------------------

STARTS = st.sampled_from([b"", b"PROXY ", b"PROXY TCP4 ", b"PROXY TCP6 ", V2_SIGNATURE])
DATA = st.one_of(
    st.binary(max_size=300),
    st.tuples(STARTS, st.binary(max_size=300)).map(b"".join),
    st.tuples(st.sampled_from([b"\x20", b"\x21"]), st.binary(max_size=300)).map(
        lambda parts: V2_SIGNATURE + parts[0] + parts[1]
    ),
)


@settings(max_examples=1000, deadline=None)
@given(data=DATA)
def test_random_bytes_only_ever_raise_the_protocol_error(data: bytes) -> None:
    try:
        length = header_length(data)
    except ProxyProtocolError:
        length = None
    if length is not None and length <= len(data):
        with contextlib.suppress(ProxyProtocolError):
            assert isinstance(parse_header(data[:length]), ProxyHeader)
    with contextlib.suppress(ProxyProtocolError):
        assert isinstance(parse_header(data), ProxyHeader)


@settings(max_examples=300, deadline=None)
@given(data=DATA)
def test_header_length_never_changes_its_mind(data: bytes) -> None:
    # Once a prefix is refused, or its length known, a longer prefix says the same.
    settled: object = None
    for size in range(len(data) + 1):
        try:
            answer: object = header_length(data[:size])
        except ProxyProtocolError:
            answer = ProxyProtocolError
        if settled is not None:
            assert answer == settled, size
        elif answer is not None:
            settled = answer
