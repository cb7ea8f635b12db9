"""Who the client is behind trusted reverse proxies, from ``Forwarded`` or ``X-Forwarded-*``.

Sans-I/O: the caller passes the peer address and the raw header pairs. Forwarding headers
are only words: any client can send them. A proxy appends the address it saw connect to it,
so the list is read right to left, and only as far as the addresses in it belong to proxies
the operator listed; the first address that is not a trusted proxy is the client, whatever
was written to the left of it (the client could have written that part itself).

Exactly one header family is read (the ``mode``): a proxy that sets ``X-Forwarded-For``
usually passes a client's own ``Forwarded`` header through untouched, so reading both would
let a client choose its address. Everything runs in time linear in the size of the headers.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import attrs

from .._http.grammar import QDTEXT, QUOTED_PAIR_TEXT, TCHAR

__all__ = ["Forwarded", "TrustedProxies", "resolve_forwarded"]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_Node = tuple[str, int]
_Item = TypeVar("_Item")

_CACHE_SIZE = 1024
_LONGEST_CACHED = 64  # longer than any address: such a host is matched, never remembered
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_MODES = ("x-forwarded", "forwarded")

# One step of the ``Forwarded`` scanner: an optional ``name=value`` pair (the value a token or
# a quoted-string) and the separator after it. Anchored, with possessive repeats and no
# overlapping choices, it never backtracks: the scanner stays linear in the header's size.
_STEP = re.compile(
    rf"""[ \t]*+
    (?: (?P<name>{TCHAR}++) =
        (?: (?P<token>{TCHAR}++) | "(?P<quoted>(?:[{QDTEXT}]|\\[{QUOTED_PAIR_TEXT}])*+)" )
    )?
    [ \t]*+ (?P<end>[,;]|\Z)""",
    re.VERBOSE,
)
_QUOTED_PAIR = re.compile(r"\\(.)")
_OBFUSCATED = re.compile(r"_[A-Za-z0-9._\-]+")
_REG_NAME = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")


class TrustedProxies:
    """The peers whose forwarding headers are believed, built once from configuration strings."""

    def __init__(self, entries: Iterable[str]) -> None:
        """Each entry is an IPv4 or IPv6 address, a CIDR network (host bits must be zero) or
        ``"unix"`` for peers over a Unix socket. Anything else raises ``ValueError``."""
        self._unix = False
        self._networks: list[_Network] = []
        self._cache: dict[str, bool] = {}
        for entry in entries:
            if entry.strip().lower() == "unix":
                self._unix = True
            else:
                self._networks.extend(_networks(entry))

    def __bool__(self) -> bool:
        """Whether any entry was given."""
        return self._unix or bool(self._networks)

    def trusts(self, host: str | None) -> bool:
        """Whether a peer at ``host`` is a trusted proxy; ``None`` stands for a Unix socket."""
        if host is None:
            return self._unix
        if len(host) > _LONGEST_CACHED:
            return self._matches(host)
        # Called for every request, often for the same few proxies: remember the answers.
        known = self._cache.get(host)
        if known is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            known = self._cache[host] = self._matches(host)
        return known

    def _matches(self, host: str) -> bool:
        address = _ip(host.partition("%")[0])  # a zone id says nothing about the network
        return address is not None and any(address in network for network in self._networks)


def _networks(entry: str) -> list[_Network]:
    """The networks one configuration entry stands for (a mapped IPv6 network is matched as
    IPv4, since ``trusts`` sees mapped hosts as IPv4)."""
    text = entry.strip()
    if text == "*":
        raise ValueError(
            "trusted proxy entry '*': trusting every peer lets any client choose its address;"
            " list the proxies' networks instead"
        )
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        raise ValueError(
            f"trusted proxy entry {entry!r} is not an IP address, a CIDR network or 'unix': {exc}"
        ) from None
    if isinstance(network, ipaddress.IPv4Network):
        return [network]
    # Rebuilt from the integer to drop a zone id: hosts are matched without theirs.
    network = ipaddress.IPv6Network((int(network.network_address), network.prefixlen))
    mapped = network.network_address.ipv4_mapped
    if mapped is not None and network.subnet_of(_MAPPED):
        return [ipaddress.IPv4Network((mapped, network.prefixlen - 96))]
    if _MAPPED.subnet_of(network):
        return [network, ipaddress.IPv4Network("0.0.0.0/0")]
    return [network]


def _ip(text: str) -> _Address | None:
    """``text`` as an IP address, an IPv4-mapped one as IPv4; ``None`` if it is none (or has
    a zone id: headers carry none)."""
    try:
        address = ipaddress.ip_address(text) if "%" not in text else None
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@attrs.frozen
class Forwarded:
    """What a trusted chain of proxies said about the original request."""

    client: tuple[str, int] | None  # (host, port); port 0 when not given
    scheme: str | None  # "http" or "https", None when not given or invalid
    host: str | None  # the original Host value, None when not given or invalid


def resolve_forwarded(
    peer: tuple[str, int] | None,
    headers: Sequence[tuple[bytes, bytes]],
    trusted: TrustedProxies,
    mode: str,
) -> Forwarded | None:
    """What the forwarding headers of ``mode`` (``"x-forwarded"`` or ``"forwarded"``) say
    about the request, or ``None`` when the peer is not trusted or they say nothing usable.
    ``peer`` is ``None`` for a Unix socket; ``headers`` are (lowercase name, value) pairs."""
    if mode not in _MODES:
        raise ValueError(f"forwarding mode must be one of {_MODES}, not {mode!r}")
    if not trusted.trusts(None if peer is None else peer[0]):
        return None
    if mode == "forwarded":
        return _from_forwarded(_joined(headers, b"forwarded"), trusted)
    return _from_x_forwarded(headers, trusted)


def _joined(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    """All lines of header ``name`` as one list (RFC 9110); ``None`` if absent or not ASCII."""
    values = [value for key, value in headers if key.lower() == name]
    try:
        return b",".join(values).decode("ascii") if values else None
    except UnicodeDecodeError:
        return None


def _walk(
    items: Sequence[_Item], node_of: Callable[[_Item], _Node | None], trusted: TrustedProxies
) -> tuple[int, _Node] | None:
    """Walk right to left past trusted proxies: the client's index and node. A malformed
    node ends the walk at the last valid one: nothing left of it can be vouched for. Nodes
    are parsed only as far as the walk goes."""
    found = None
    for index in range(len(items) - 1, -1, -1):
        node = node_of(items[index])
        if node is None:
            break
        found = index, node
        if not trusted.trusts(node[0]):  # "unknown" and "_hidden" are no addresses: never
            break
    return found


def _split_node(text: str) -> tuple[str, str | None] | None:
    """``name[:port]`` (the name maybe a bracketed IPv6 address) as name and port text."""
    if text.startswith("["):
        end = text.find("]") + 1
        if not end:
            return None
        name, rest = text[:end], text[end:]
        if not rest:
            return name, None
        return (name, rest[1:]) if rest[0] == ":" else None
    name, colon, port = text.partition(":")
    return name, port if colon else None


def _ip_host(name: str) -> str | None:
    """An IPv4 address or a bracketed IPv6 address, normalized, or ``None``."""
    bracketed = name.startswith("[")
    inside = name[1:-1] if bracketed else name
    # IPv6 text always has a colon, IPv4 text never: this tells which family was written.
    address = _ip(inside) if (":" in inside) == bracketed else None
    return None if address is None else str(address)


def _port(text: str) -> int | None:
    valid = 0 < len(text) <= 5 and text.isascii() and text.isdigit() and int(text) <= 65535
    return int(text) if valid else None


def _result(client: _Node | None, scheme: str | None, host: str | None) -> Forwarded | None:
    scheme = scheme.lower() if scheme and scheme.lower() in ("http", "https") else None
    forwarded = Forwarded(client, scheme, _valid_host(host))
    return None if forwarded == Forwarded(None, None, None) else forwarded


def _valid_host(value: str | None) -> str | None:
    """``value`` when it is a valid ``Host`` value, else ``None``."""
    split = None if value is None or len(value) > 255 else _split_node(value)
    if split is None:
        return None
    name, port = split
    if port is not None and _port(port) is None:
        return None
    valid = _ip_host(name) if name.startswith("[") else _REG_NAME.fullmatch(name)
    return value if valid else None


# -- X-Forwarded-For, -Proto, -Host ----------------------------------------------------------


def _from_x_forwarded(
    headers: Sequence[tuple[bytes, bytes]], trusted: TrustedProxies
) -> Forwarded | None:
    chain = _joined(headers, b"x-forwarded-for")
    protos = _items(_joined(headers, b"x-forwarded-proto"))
    hosts = _items(_joined(headers, b"x-forwarded-host"))
    client, hops = None, 0
    if chain is not None:
        items = _items(chain)
        walked = _walk(items, _x_forwarded_node, trusted)
        if walked is not None:
            client, hops = walked[1], len(items) - 1 - walked[0]
    # Proxies that set Proto/Host as well line up with For; a shorter list usually means
    # only the outermost proxy set it, so its leftmost value is the one that counts.
    return _result(client, _from_right(protos, hops), _from_right(hosts, hops))


def _items(value: str | None) -> list[str]:
    """The comma-separated items of a list header, whitespace trimmed; empty ones are kept
    so that positions still line up across the headers."""
    return [] if value is None else [item.strip(" \t") for item in value.split(",")]


def _from_right(values: list[str], hops: int) -> str | None:
    return values[max(len(values) - 1 - hops, 0)] if values else None


def _x_forwarded_node(item: str) -> _Node | None:
    """``IPv4``, ``IPv6``, ``[IPv6]``, ``IPv4:port`` or ``[IPv6]:port`` as (address, port)."""
    if item.count(":") > 1 and not item.startswith("["):
        address = _ip(item)
        return None if address is None else (str(address), 0)
    split = _split_node(item)
    host = None if split is None else _ip_host(split[0])
    if split is None or host is None:
        return None
    port = 0 if split[1] is None else _port(split[1])
    return None if port is None else (host, port)


# -- Forwarded (RFC 7239) --------------------------------------------------------------------


def _from_forwarded(value: str | None, trusted: TrustedProxies) -> Forwarded | None:
    elements = None if value is None else _parse_forwarded(value)
    if not elements:
        return None
    walked = _walk(elements, _forwarded_node, trusted)
    if walked is None:
        return None
    # The element naming the client is the one its first proxy wrote: its proto and host
    # describe the request the client made.
    element = elements[walked[0]] or {}
    return _result(walked[1], element.get("proto"), element.get("host"))


def _parse_forwarded(text: str) -> list[dict[str, str] | None] | None:
    """The elements of a ``Forwarded`` value, each its parameters by lowercased name (``None``
    for an element that repeats one), or ``None`` for a syntax error anywhere. One pass,
    left to right: each step reads an optional pair and the separator after it."""
    elements: list[dict[str, str] | None] = []
    pairs: dict[str, str] = {}
    repeated = False
    position = 0
    while (step := _STEP.match(text, position)) is not None:
        if step["name"] is not None:
            name = step["name"].lower()
            repeated = repeated or name in pairs
            quoted = step["quoted"]
            pairs[name] = step["token"] if quoted is None else _QUOTED_PAIR.sub(r"\1", quoted)
        if step["end"] != ";":
            if pairs:  # empty list elements are allowed, and mean nothing
                elements.append(None if repeated else pairs)
            pairs, repeated = {}, False
        if not step["end"]:
            return elements
        position = step.end()
    return None


def _forwarded_node(element: dict[str, str] | None) -> _Node | None:
    """The ``for=`` node of an element as (host, port); ``unknown`` and obfuscated names are
    kept as they are, an obfuscated port is 0."""
    split = None if element is None or "for" not in element else _split_node(element["for"])
    if split is None:
        return None
    name, port_text = split
    host = name if _OBFUSCATED.fullmatch(name) else _ip_host(name)
    if name.lower() == "unknown":
        host = "unknown"
    port = 0 if port_text is None or _OBFUSCATED.fullmatch(port_text) else _port(port_text)
    return None if host is None or port is None else (host, port)
