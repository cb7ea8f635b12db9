"""The PROXY protocol (HAProxy's spec, version 1 text and version 2 binary), sans-I/O.

A load balancer that speaks it sends one header before the client's bytes, naming the
client's address. The server reads that header with ``MSG_PEEK`` and then consumes exactly
as many bytes as it is long, so that the first byte of the request itself stays in the
socket for the TLS or HTTP layer: it never consumes a byte it does not know to be the
header's. That is why ``header_length`` works on any prefix of what has arrived: it says how
long the header is as soon as that is known, ``None`` while it is not, and raises as soon as
the bytes cannot begin a valid header, so a bad header (say, a plain HTTP request from a
proxy configured without the protocol) fails at once instead of waiting for more bytes.
``parse_header`` then reads the whole header.
"""

from __future__ import annotations

import ipaddress

import attrs

__all__ = [
    "V1_MAX",
    "V2_SIGNATURE",
    "ProxyHeader",
    "ProxyProtocolError",
    "header_length",
    "parse_header",
]

V1_MAX = 107  # the spec's longest v1 line, CRLF included
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"

_Family = type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]

_V1_START = b"PROXY "
_V2_FIXED = 16  # signature, version and command, family, address length
_LOCAL, _PROXY = 0, 1
_UNSPEC, _TCP4, _TCP6, _UNIX = 0x00, 0x11, 0x21, 0x31
# What each supported family's addresses take, before any TLVs.
_ADDRESS_SIZES = {_UNSPEC: 0, _TCP4: 12, _TCP6: 36, _UNIX: 216}


class ProxyProtocolError(ValueError):
    """The bytes are not a valid PROXY protocol header."""


@attrs.frozen
class ProxyHeader:
    """The addresses a PROXY header gives; ``None`` means the header names no address (a v2
    LOCAL command, v1 UNKNOWN, an unspecified or a Unix family): use the real peer."""

    source: tuple[str, int] | None
    destination: tuple[str, int] | None


def header_length(prefix: bytes) -> int | None:
    """Given the first bytes received on a connection, the total length of the PROXY header
    once it is known, None while more bytes are needed; ProxyProtocolError as soon as the
    bytes cannot start a valid header (so a caller never waits for more of a bad header)."""
    if not prefix:
        return None
    if prefix[0] == _V1_START[0]:
        return _v1_length(prefix)
    if prefix[0] == V2_SIGNATURE[0]:
        return _v2_length(prefix)
    raise ProxyProtocolError("the connection does not start with a PROXY protocol header")


def parse_header(header: bytes) -> ProxyHeader:
    """Parse exactly one whole header (as long as header_length said)."""
    if header_length(header) != len(header):
        raise ProxyProtocolError("not exactly one whole PROXY protocol header")
    if header.startswith(_V1_START):
        return _parse_v1(header[len(_V1_START) : -2])
    return _parse_v2(header[12], header[13], header[_V2_FIXED:])


# -- version 1: one line of text -------------------------------------------------------------


def _v1_length(prefix: bytes) -> int | None:
    start = prefix[: len(_V1_START)]
    if not _V1_START.startswith(start):
        raise ProxyProtocolError("not a PROXY protocol v1 line")
    # A CR past V1_MAX - 2 would end the line too late: search only where it may be.
    cr = prefix.find(b"\r", 0, V1_MAX - 1)
    lf = prefix.find(b"\n", 0, V1_MAX)
    if lf != -1 and (cr == -1 or lf < cr):
        raise ProxyProtocolError("a line feed without a carriage return in a PROXY v1 line")
    if cr == -1:
        if len(prefix) >= V1_MAX - 1:
            raise ProxyProtocolError(f"a PROXY v1 line longer than {V1_MAX} bytes")
        return None
    if cr + 1 == len(prefix):
        return None
    if prefix[cr + 1] != ord("\n"):
        raise ProxyProtocolError("a carriage return without a line feed in a PROXY v1 line")
    return cr + 2


def _parse_v1(line: bytes) -> ProxyHeader:
    """The part of the line between ``PROXY `` and CRLF."""
    if line.startswith(b"UNKNOWN"):  # whatever follows is to be ignored
        return ProxyHeader(None, None)
    fields = line.split(b" ")
    if len(fields) != 5 or fields[0] not in (b"TCP4", b"TCP6"):
        raise ProxyProtocolError(f"a malformed PROXY v1 line: {line!r}")
    family = ipaddress.IPv4Address if fields[0] == b"TCP4" else ipaddress.IPv6Address
    source, destination = (_v1_address(field, family) for field in fields[1:3])
    source_port, destination_port = (_v1_port(field) for field in fields[3:5])
    return ProxyHeader((source, source_port), (destination, destination_port))


def _v1_address(field: bytes, family: _Family) -> str:
    text = field.decode("ascii", errors="replace")
    try:
        if "%" in text:  # a zone id is the sender's own business, never the client's address
            raise ValueError(text)
        return _address(family(text))
    except ValueError:
        raise ProxyProtocolError(f"not an address of the PROXY v1 family: {field!r}") from None


def _v1_port(field: bytes) -> int:
    # Decimal without leading zeros, as the spec writes ports.
    if field.isdigit() and (field == b"0" or not field.startswith(b"0")) and len(field) <= 5:
        port = int(field)
        if port <= 65535:
            return port
    raise ProxyProtocolError(f"not a port in a PROXY v1 line: {field!r}")


# -- version 2: binary -----------------------------------------------------------------------


def _v2_length(prefix: bytes) -> int | None:
    # Each fixed field is checked as soon as it arrives, rather than in parse_header, so an
    # unusable header is refused before the caller waits for the rest of it.
    if not V2_SIGNATURE.startswith(prefix[: len(V2_SIGNATURE)]):
        raise ProxyProtocolError("not a PROXY protocol v2 signature")
    proxied = len(prefix) > 12 and _check_command(prefix[12]) == _PROXY
    if proxied and len(prefix) > 13 and prefix[13] not in _ADDRESS_SIZES:
        raise ProxyProtocolError(f"unsupported PROXY v2 address family 0x{prefix[13]:02x}")
    if len(prefix) < _V2_FIXED:
        return None
    length = int.from_bytes(prefix[14:16], "big")
    if proxied and length < _ADDRESS_SIZES[prefix[13]]:
        raise ProxyProtocolError("PROXY v2 addresses shorter than their family needs")
    return _V2_FIXED + length


def _check_command(version_command: int) -> int:
    """The command of a valid version and command byte."""
    version, command = version_command >> 4, version_command & 0x0F
    if version != 2:
        raise ProxyProtocolError(f"PROXY protocol version {version}, not 2")
    if command not in (_LOCAL, _PROXY):
        raise ProxyProtocolError(f"unknown PROXY v2 command {command}")
    return command


def _parse_v2(version_command: int, family: int, body: bytes) -> ProxyHeader:
    """The header after ``header_length`` checked its fixed part."""
    if version_command & 0x0F == _LOCAL:
        return ProxyHeader(None, None)  # the proxy's own connection, e.g. a health check
    if family == _UNSPEC:
        return ProxyHeader(None, None)  # addresses of an unknown kind: nothing to check
    _check_tlvs(body[_ADDRESS_SIZES[family] :])
    if family == _TCP4:
        return _v2_addresses(body, 4, ipaddress.IPv4Address)
    if family == _TCP6:
        return _v2_addresses(body, 16, ipaddress.IPv6Address)
    return ProxyHeader(None, None)  # a Unix socket: no address to report


def _v2_addresses(body: bytes, width: int, family: _Family) -> ProxyHeader:
    source, destination = family(body[:width]), family(body[width : 2 * width])
    ports = body[2 * width : 2 * width + 4]
    return ProxyHeader(
        (_address(source), int.from_bytes(ports[:2], "big")),
        (_address(destination), int.from_bytes(ports[2:], "big")),
    )


def _check_tlvs(data: bytes) -> None:
    """The type-length-value records after the addresses must cover the rest exactly; what
    they say is not needed here."""
    position = 0
    while position < len(data):
        if position + 3 > len(data):
            raise ProxyProtocolError("a truncated PROXY v2 TLV header")
        position += 3 + int.from_bytes(data[position + 1 : position + 3], "big")
        if position > len(data):
            raise ProxyProtocolError("a PROXY v2 TLV longer than the header")


def _address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """The address as text: IPv6 compressed, an IPv4-mapped IPv6 address as IPv4."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)
