"""``resolve_forwarded``: the RFC 7239 ``Forwarded`` header and ``X-Forwarded-*``, read right to
left past trusted proxies; malformed input, spoofing attempts, and a property test."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._proxy import Forwarded, TrustedProxies, forwarded, resolve_forwarded

TRUSTED = TrustedProxies(["127.0.0.1", "10.0.0.0/8", "2001:db8:ffff::/48", "unix"])
PEER = ("127.0.0.1", 40000)
Headers = list[tuple[str, str]]


def resolve(
    mode: str,
    headers: Headers,
    peer: tuple[str, int] | None = PEER,
    trusted: TrustedProxies = TRUSTED,
) -> Forwarded | None:
    raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    return resolve_forwarded(peer, raw, trusted, mode)


def client(
    host: str, port: int = 0, scheme: str | None = None, hostname: str | None = None
) -> Forwarded:
    """The result naming ``(host, port)`` as the client."""
    return Forwarded((host, port), scheme, hostname)


# -- Forwarded (RFC 7239) --------------------------------------------------------------------

FORWARDED_CASES = [
    # The RFC's own examples (sections 4, 5.2, 6.3, 7.1, 7.4).
    ('for="_gazonk"', client("_gazonk")),
    ('For="[2001:db8:cafe::17]:4711"', client("2001:db8:cafe::17", 4711)),
    ("for=192.0.2.60;proto=http;by=203.0.113.43", client("192.0.2.60", scheme="http")),
    ("for=192.0.2.43, for=198.51.100.17", client("198.51.100.17")),
    (
        "for=192.0.2.43,for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com",
        client("198.51.100.17", scheme="http", hostname="example.com"),
    ),
    ('for=192.0.2.43, for="[2001:db8:cafe::17]"', client("2001:db8:cafe::17")),
    ('for="192.0.2.43:47011"', client("192.0.2.43", 47011)),
    ('for="[2001:db8:cafe::17]:47011"', client("2001:db8:cafe::17", 47011)),
    ("for=_hidden, for=_SEVKISEK", client("_SEVKISEK")),
    ("for=unknown", client("unknown")),
    ("for=UNKNOWN", client("unknown")),
    # unknown and obfuscated nodes are never trusted: the walk stops there.
    ("for=192.0.2.43, for=unknown", client("unknown")),
    ("for=192.0.2.43, for=_proxy1, for=10.0.0.1", client("_proxy1")),
    ('for="_hidden:_port"', client("_hidden")),
    ('for="_hidden:4711"', client("_hidden", 4711)),
    ('for="unknown:4711"', client("unknown", 4711)),
    ('for="192.0.2.43:_abc.-_"', client("192.0.2.43")),
    # Quoting: escapes are undone, commas and semicolons inside quotes do not split.
    ('for="\\1\\9\\2.0.2.43"', client("192.0.2.43")),
    ('for=192.0.2.1;host="a,b;c"', client("192.0.2.1", hostname="a,b;c")),
    ('for=192.0.2.1;host="x\\"y"', client("192.0.2.1")),  # a quote is no host character
    (
        'for="10.0.0.1";host="ex,ample.com", for=10.0.0.2',
        client("10.0.0.1", hostname="ex,ample.com"),
    ),
    ('for=192.0.2.1;proto="https"', client("192.0.2.1", scheme="https")),
    ('for=192.0.2.1;proto=""', client("192.0.2.1")),
    # Names are case-insensitive; unknown parameters are ignored; whitespace around separators.
    (
        "FOR=192.0.2.1;PROTO=HTTPS;HOST=Example.COM",
        client("192.0.2.1", scheme="https", hostname="Example.COM"),
    ),
    ("for=192.0.2.1;ext=whatever;by=_x", client("192.0.2.1")),
    (" for=192.0.2.1 ; proto=https ,\tfor=10.0.0.2 ", client("192.0.2.1", scheme="https")),
    ("for=192.0.2.1,,  ,", client("192.0.2.1")),
    ("for=192.0.2.1;;proto=http;", client("192.0.2.1", scheme="http")),
    # The walk: trusted proxies are passed, the first untrusted address is the client.
    ("for=192.0.2.1, for=10.0.0.5", client("192.0.2.1")),
    ('for=192.0.2.1, for="[2001:db8:ffff::5]:80", for=10.0.0.5', client("192.0.2.1")),
    ("for=10.0.0.1, for=10.0.0.2, for=127.0.0.1", client("10.0.0.1")),  # all trusted
    ("for=6.6.6.6, for=192.0.2.1, for=10.0.0.2", client("192.0.2.1")),
    # A malformed node ends the walk at the last valid one.
    ("for=192.0.2.1, for=bogus, for=10.0.0.2", client("10.0.0.2")),
    ("for=192.0.2.1, by=10.0.0.9, for=10.0.0.2", client("10.0.0.2")),
    ("for=192.0.2.1, for=10.0.0.3;proto=http;proto=https, for=10.0.0.2", client("10.0.0.2")),
    ('for=192.0.2.1, for="2001:db8::1", for=10.0.0.2', client("10.0.0.2")),
    # proto and host come from the element that names the client.
    (
        "for=192.0.2.1;proto=https;host=example.com, for=10.0.0.2;proto=http;host=internal",
        client("192.0.2.1", scheme="https", hostname="example.com"),
    ),
    ("for=192.0.2.1, for=10.0.0.2;proto=https;host=example.com", client("192.0.2.1")),
    ('for=192.0.2.1;proto=javascript;host="evil.com/path"', client("192.0.2.1")),
    ('for=192.0.2.1;host="a b"', client("192.0.2.1")),
]


@pytest.mark.parametrize(("value", "expected"), FORWARDED_CASES)
def test_forwarded(value: str, expected: Forwarded) -> None:
    assert resolve("forwarded", [("forwarded", value)]) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        " , ",
        'for="192.0.2.1',  # unterminated quote
        'for="192.0.2.1\\',
        "for",  # missing "="
        "for=",  # missing value
        "=192.0.2.1",
        "for=192.0.2.1;proto",
        "for=192.0.2.1:80",  # ":" is no token character: the node must be quoted
        "for=[2001:db8::1]",
        "for=a b",
        "for=192.0.2.1 x",
        'for="192.0.2.1"x',
        'for="192.0.2.1"",',
        "for=192.0.2.1;proto=h(ttp",
        "f\u00f6r=192.0.2.1",
        'for="192.0.2.1\x7f"',
        'for=192.0.2.1, for=10.0.0.1;proto="a',  # a syntax error anywhere voids all of it
        "for=192.0.2.1;for=192.0.2.2",  # repeated parameter
        "for=192.0.2.1;For=192.0.2.2",
        'for="2001:db8::1"',  # IPv6 not bracketed
        'for="[2001:db8::1]:"',
        'for="[2001:db8::1]x"',
        'for="[192.0.2.1]"',
        'for="[fe80::1%eth0]"',
        'for="192.0.2.1:65536"',
        'for="192.0.2.1:123456"',
        'for="192.0.2.1:"',
        "for=300.1.1.1",
        "for=_",
        'for="_hid den"',
        "by=10.0.0.1;proto=https",  # no for=
        "for=192.0.2.1, for=bogus",  # the rightmost node is malformed
    ],
)
def test_malformed_forwarded_is_ignored(value: str) -> None:
    assert resolve("forwarded", [("forwarded", value)]) is None


def test_forwarded_lines_are_one_list() -> None:
    headers = [("forwarded", "for=6.6.6.6, for=192.0.2.1"), ("forwarded", "for=10.0.0.1")]
    assert resolve("forwarded", headers) == client("192.0.2.1")
    # Exactly as RFC 9110 combines lines: joined with a comma, even inside a quoted-string.
    headers = [("forwarded", 'for=192.0.2.1;host="a'), ("forwarded", 'b"')]
    joined = [("forwarded", 'for=192.0.2.1;host="a,b"')]
    assert resolve("forwarded", headers) == resolve("forwarded", joined)


# -- X-Forwarded-For, -Proto, -Host ----------------------------------------------------------

XFF = "x-forwarded-for"
PROTO = "x-forwarded-proto"
HOST = "x-forwarded-host"

X_FORWARDED_CASES: list[tuple[Headers, Forwarded | None]] = [
    ([(XFF, "192.0.2.1")], client("192.0.2.1")),
    ([(XFF, "  192.0.2.1\t")], client("192.0.2.1")),
    ([(XFF, "192.0.2.1:8080")], client("192.0.2.1", 8080)),
    ([(XFF, "2001:DB8:0:0:0:0:0:1")], client("2001:db8::1")),
    ([(XFF, "[2001:db8::1]")], client("2001:db8::1")),
    ([(XFF, "[2001:db8::1]:8080")], client("2001:db8::1", 8080)),
    ([(XFF, "::ffff:192.0.2.1")], client("192.0.2.1")),
    ([(XFF, "[::ffff:192.0.2.1]:5")], client("192.0.2.1", 5)),
    # Spoofing: whatever the client wrote is left of the address the proxy saw.
    ([(XFF, "6.6.6.6, 203.0.113.7")], client("203.0.113.7")),
    ([(XFF, "10.0.0.1, 203.0.113.7")], client("203.0.113.7")),
    # Several trusted hops, all trusted, and malformed entries.
    ([(XFF, "192.0.2.1, 10.0.0.1, 10.0.0.2")], client("192.0.2.1")),
    ([(XFF, "10.0.0.1, 10.0.0.2, 127.0.0.1")], client("10.0.0.1")),
    ([(XFF, "192.0.2.1, garbage, 10.0.0.2")], client("10.0.0.2")),
    ([(XFF, "192.0.2.1,,10.0.0.2")], client("10.0.0.2")),
    ([(XFF, "192.0.2.1, 10.0.0.1:99999, 10.0.0.2")], client("10.0.0.2")),
    ([(XFF, "192.0.2.1, garbage")], None),
    ([(XFF, "")], None),
    ([(XFF, ",")], None),
    # Lines of the same header are one list, in order.
    ([(XFF, "6.6.6.6, 192.0.2.1"), (XFF, "10.0.0.1")], client("192.0.2.1")),
    ([(XFF, "192.0.2.1"), ("x-other", "1"), (XFF, "10.0.0.1, 10.0.0.2")], client("192.0.2.1")),
    # Proto and Host line up with For counted from the right...
    ([(XFF, "192.0.2.1, 10.0.0.1"), (PROTO, "https, http")], client("192.0.2.1", scheme="https")),
    ([(XFF, "192.0.2.1"), (PROTO, "https, http")], client("192.0.2.1", scheme="http")),
    (
        [(XFF, "6.6.6.6, 192.0.2.1, 10.0.0.1"), (PROTO, "javascript, https, http")],
        client("192.0.2.1", scheme="https"),
    ),
    (
        [(XFF, "192.0.2.1, 10.0.0.1"), (HOST, "example.com, internal"), (HOST, "ignored")],
        client("192.0.2.1", hostname="internal"),
    ),
    # ...and a shorter list counts from its leftmost value.
    (
        [(XFF, "192.0.2.1, 10.0.0.1, 10.0.0.2"), (PROTO, "HTTPS")],
        client("192.0.2.1", scheme="https"),
    ),
    (
        [(XFF, "192.0.2.1, 10.0.0.1, 10.0.0.2"), (HOST, "example.com:8443")],
        client("192.0.2.1", hostname="example.com:8443"),
    ),
    ([(XFF, "192.0.2.1, garbage"), (PROTO, "https")], Forwarded(None, "https", None)),
    # Proto and Host without For.
    ([(PROTO, "https"), (HOST, "example.com")], Forwarded(None, "https", "example.com")),
    ([(HOST, "[2001:db8::1]:8080")], Forwarded(None, None, "[2001:db8::1]:8080")),
    ([(PROTO, "https, ")], None),  # the rightmost value is empty
    # Invalid values are dropped, not the whole result.
    ([(XFF, "192.0.2.1"), (PROTO, "javascript")], client("192.0.2.1")),
    ([(XFF, "192.0.2.1"), (HOST, "evil.com/path")], client("192.0.2.1")),
    ([(PROTO, "javascript"), (HOST, "a b")], None),
    ([(HOST, "x" * 256)], None),
]


@pytest.mark.parametrize(("headers", "expected"), X_FORWARDED_CASES)
def test_x_forwarded(headers: Headers, expected: Forwarded | None) -> None:
    assert resolve("x-forwarded", headers) == expected


@pytest.mark.parametrize(
    "entry",
    [
        "unknown",
        "_hidden",
        "192.0.2.1:",
        "192.0.2.1:0x50",
        "192.0.2.1:65536",
        "192.0.2.1:80:80",
        "[2001:db8::1]8080",
        "[2001:db8::1",
        "2001:db8::1]",
        "[192.0.2.1]",
        "fe80::1%eth0",
        "[fe80::1%eth0]",
        "192.0.2.1 10.0.0.1",
        "192.0.2.01",
        "host.example",
        '"192.0.2.1"',
    ],
)
def test_malformed_x_forwarded_for_entries(entry: str) -> None:
    assert resolve("x-forwarded", [(XFF, entry)]) is None
    assert resolve("x-forwarded", [(XFF, f"192.0.2.7, {entry}, 10.0.0.1")]) == client("10.0.0.1")


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "EXAMPLE.com:80",
        "192.0.2.1",
        "192.0.2.1:65535",
        "[2001:db8::1]",
        "[2001:db8::1]:8080",
        "xn--bcher-kva.example",
        "a%20b.example",
        "a-b_c~d!$&'()*+;=.example",
        "x" * 255,
    ],
)
def test_valid_hosts(host: str) -> None:
    assert resolve("x-forwarded", [(HOST, host)]) == Forwarded(None, None, host)
    quoted = host.replace("\\", "\\\\").replace('"', '\\"')
    assert resolve("forwarded", [("forwarded", f'for=192.0.2.1;host="{quoted}"')]) == client(
        "192.0.2.1", hostname=host
    )


@pytest.mark.parametrize(
    "host",
    [
        "",
        "evil.com/path",
        "a b",
        "x" * 256,
        "example.com:",
        "example.com:99999",
        "example.com:8o",
        "example.com:80:80",
        "exa%zzmple.com",
        "exa%2",
        "[2001:db8::1",
        "[2001:db8::1]x",
        "[192.0.2.1]",
        "[v1.fe]",
        "[fe80::1%25eth0]",
        "user@example.com",
        "example.com?",
        "example.com#",
        'ex"ample.com',
    ],
)
def test_invalid_hosts(host: str) -> None:
    assert resolve("x-forwarded", [(HOST, host)]) is None


@pytest.mark.parametrize("scheme", ["javascript", "ftp", "ht tp", "https2", "", "ws", "http:"])
def test_invalid_schemes(scheme: str) -> None:
    assert resolve("x-forwarded", [(XFF, "192.0.2.1"), (PROTO, scheme)]) == client("192.0.2.1")


# -- who is believed, and which headers ------------------------------------------------------


def test_an_untrusted_peer_is_not_believed() -> None:
    headers = [(XFF, "192.0.2.1"), (PROTO, "https"), ("forwarded", "for=192.0.2.1")]
    for mode in ("x-forwarded", "forwarded"):
        assert resolve(mode, headers, peer=("203.0.113.9", 1234)) is None
        assert resolve(mode, headers, peer=("10.0.0.1", 1), trusted=TrustedProxies([])) is None


def test_peers_over_unix_sockets_are_trusted_when_listed() -> None:
    headers = [(XFF, "192.0.2.1")]
    assert resolve("x-forwarded", headers, peer=None) == client("192.0.2.1")
    only_tcp = TrustedProxies(["127.0.0.1"])
    assert resolve("x-forwarded", headers, peer=None, trusted=only_tcp) is None


def test_a_mapped_peer_address_is_its_ipv4_address() -> None:
    headers = [(XFF, "192.0.2.1")]
    assert resolve("x-forwarded", headers, peer=("::ffff:127.0.0.1", 1)) == client("192.0.2.1")


def test_x_forwarded_mode_never_reads_forwarded() -> None:
    # The proxy appends to X-Forwarded-For and passes the client's own Forwarded through.
    spoofed = ("forwarded", "for=6.6.6.6;proto=https;host=evil.com")
    assert resolve("x-forwarded", [spoofed, (XFF, "203.0.113.7")]) == client("203.0.113.7")
    assert resolve("x-forwarded", [spoofed]) is None


def test_forwarded_mode_never_reads_x_forwarded() -> None:
    spoofed = [(XFF, "6.6.6.6"), (PROTO, "https"), (HOST, "evil.com")]
    assert resolve("forwarded", spoofed) is None
    assert resolve("forwarded", [*spoofed, ("forwarded", "for=203.0.113.7")]) == client(
        "203.0.113.7"
    )


def test_no_headers_means_nothing_to_apply() -> None:
    assert resolve("x-forwarded", []) is None
    assert resolve("forwarded", [("host", "example.com")]) is None


@pytest.mark.parametrize("mode", ["", "X-Forwarded", "both", "proxy"])
def test_an_unknown_mode_is_refused(mode: str) -> None:
    with pytest.raises(ValueError, match="mode"):
        resolve(mode, [(XFF, "192.0.2.1")])
    with pytest.raises(ValueError, match="mode"):
        resolve(mode, [], peer=("203.0.113.9", 1))  # whoever the peer is


def test_non_ascii_values_make_their_header_absent() -> None:
    raw = [(b"x-forwarded-for", b"192.0.2.1\xff")]
    assert resolve_forwarded(PEER, raw, TRUSTED, "x-forwarded") is None
    raw = [(b"x-forwarded-for", b"192.0.2.1"), (b"x-forwarded-proto", b"http\xe9")]
    assert resolve_forwarded(PEER, raw, TRUSTED, "x-forwarded") == client("192.0.2.1")
    raw = [(b"forwarded", b"for=192.0.2.1"), (b"forwarded", b'for="\xe9"')]
    assert resolve_forwarded(PEER, raw, TRUSTED, "forwarded") is None


def test_header_names_are_matched_whatever_their_case() -> None:
    raw = [(b"X-Forwarded-For", b"192.0.2.1"), (b"FORWARDED", b"for=192.0.2.2")]
    assert resolve_forwarded(PEER, raw, TRUSTED, "x-forwarded") == client("192.0.2.1")
    assert resolve_forwarded(PEER, raw, TRUSTED, "forwarded") == client("192.0.2.2")


# -- cost and robustness ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, answer",
    [
        ('for="' + "\\a" * 100_000, None),  # an unterminated quoted-string full of escapes
        ("for=" + "a" * 200_000 + " x", None),
        ("for=10.0.0.1, " * 20_000 + "for=192.0.2.1", ("192.0.2.1", 0)),
        (" " * 200_000 + ";", None),
        ("a" * 200_000, None),
        (";" * 200_000 + "=", None),
    ],
)
def test_adversarial_forwarded_headers_are_scanned_in_one_pass(
    value: str, answer: tuple[str, int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scanner takes one step per pair or separator, never going back: counted here, not
    # timed (each step's regex uses possessive repeats, so it cannot backtrack either).
    steps = 0
    step = forwarded._STEP

    class Counting:
        def match(self, text: str, position: int) -> re.Match[str] | None:
            nonlocal steps
            steps += 1
            return step.match(text, position)

    monkeypatch.setattr(forwarded, "_STEP", Counting())
    found = resolve("forwarded", [("forwarded", value)])
    assert (found.client if found else None) == answer
    assert steps <= value.count(",") + value.count(";") + 1


def test_long_chains_are_walked_only_as_far_as_needed() -> None:
    chain = ", ".join(f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}" for n in range(5_000))
    assert resolve("x-forwarded", [(XFF, "192.0.2.1, " + chain)]) == client("192.0.2.1")


FRAGMENTS = st.sampled_from(
    [
        "for=",
        "For=",
        "proto=",
        "host=",
        "by=",
        ";",
        ",",
        " ",
        '"',
        "\\",
        "[",
        "]",
        ":",
        "192.0.2.1",
        "10.0.0.1",
        "127.0.0.1",
        "2001:db8::1",
        "::ffff:10.0.0.1",
        "unknown",
        "_x",
        "80",
        "99999",
        "https",
        "http",
        "example.com",
        "%41",
        "\t",
        "=",
    ]
)
VALUES = st.one_of(
    st.binary(max_size=200),
    st.lists(FRAGMENTS, max_size=30).map(lambda parts: "".join(parts).encode()),
)
NAMES = st.sampled_from(
    [b"forwarded", b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host"]
)


def _looks_like_a_client(host: str) -> bool:
    if host == "unknown" or host.startswith("_"):
        return True
    ipaddress.ip_address(host)  # raises if it is not an address
    return True


@settings(max_examples=500, deadline=None)
@given(
    headers=st.lists(st.tuples(NAMES, VALUES), max_size=6),
    mode=st.sampled_from(["forwarded", "x-forwarded"]),
    peer=st.sampled_from([PEER, None, ("10.1.2.3", 1), ("192.0.2.200", 1)]),
)
def test_any_bytes_give_none_or_a_sane_result(
    headers: list[tuple[bytes, bytes]], mode: str, peer: tuple[str, int] | None
) -> None:
    result = resolve_forwarded(peer, headers, TRUSTED, mode)
    if result is None:
        return
    assert isinstance(result, Forwarded)
    assert result != Forwarded(None, None, None)
    if result.client is not None:
        host, port = result.client
        assert _looks_like_a_client(host)
        assert 0 <= port <= 65535
    assert result.scheme in (None, "http", "https")
    assert result.host is None or 0 < len(result.host) <= 255
