"""Unit tests of the sans-I/O HTTP values: ``Headers``, the ``url`` helpers and ``Method``.

Plain synchronous tests; no server and no trio.
"""

from __future__ import annotations

import itertools

import pytest

from trioframe._http.headers import Headers
from trioframe._http.method import Method
from trioframe._http.url import (
    MAX_QUERY_FIELDS,
    QueryDecoder,
    Uri,
    parse_query,
    percent_decode,
    split_target,
    unescape,
)

# -- Headers ----------------------------------------------------------------------------------


def sample_headers() -> Headers:
    return Headers(
        [
            (b"host", b"example.com"),
            (b"accept", b"text/html"),
            (b"x-multi", b"one"),
            (b"accept", b"application/json"),
            (b"x-latin", "caf\u00e9".encode("latin-1")),
        ]
    )


def test_headers_get_is_case_insensitive_and_returns_the_first_value() -> None:
    headers = sample_headers()
    assert headers.get("Host") == "example.com"
    assert headers.get("HOST") == "example.com"
    assert headers.get("accept") == "text/html"
    assert headers.get("missing") is None
    assert headers.get("missing", "fallback") == "fallback"


def test_headers_get_all_in_arrival_order() -> None:
    headers = sample_headers()
    assert headers.get_all("Accept") == ["text/html", "application/json"]
    assert headers.get_all("x-multi") == ["one"]
    assert headers.get_all("missing") == []


def test_headers_contains() -> None:
    headers = sample_headers()
    assert "accept" in headers
    assert "ACCEPT" in headers
    assert "missing" not in headers
    assert b"accept" not in headers  # only str names
    assert 1 not in headers


def test_headers_getitem() -> None:
    headers = sample_headers()
    assert headers["X-Multi"] == "one"
    with pytest.raises(KeyError):
        headers["missing"]


def test_headers_iterate_over_distinct_lower_case_names() -> None:
    headers = sample_headers()
    assert list(headers) == ["host", "accept", "x-multi", "x-latin"]
    assert len(headers) == 4


def test_headers_items_keep_repeats_in_order() -> None:
    assert sample_headers().items() == [
        ("host", "example.com"),
        ("accept", "text/html"),
        ("x-multi", "one"),
        ("accept", "application/json"),
        ("x-latin", "café"),
    ]


def test_headers_values_decode_as_latin_1() -> None:
    assert sample_headers().get("x-latin") == "café"


def test_headers_to_dict_joins_repeats() -> None:
    assert sample_headers().to_dict() == {
        "host": "example.com",
        "accept": "text/html, application/json",
        "x-multi": "one",
        "x-latin": "café",
    }


def test_headers_from_pairs_lower_cases_names() -> None:
    headers = Headers.from_pairs([("Content-Type", "text/plain"), ("X-A", "1"), ("x-a", "2")])
    assert headers.raw == [(b"content-type", b"text/plain"), (b"x-a", b"1"), (b"x-a", b"2")]
    assert headers.get_all("X-A") == ["1", "2"]


def test_empty_headers() -> None:
    headers = Headers()
    assert len(headers) == 0
    assert list(headers) == []
    assert headers.get("a") is None
    assert headers.to_dict() == {}


def test_headers_equality_and_unhashable() -> None:
    assert Headers([(b"a", b"1")]) == Headers([(b"a", b"1")])
    assert Headers([(b"a", b"1")]) != Headers([(b"a", b"2")])
    assert Headers([(b"a", b"1"), (b"b", b"2")]) != Headers([(b"b", b"2"), (b"a", b"1")])
    with pytest.raises(TypeError):
        hash(Headers())


# -- percent_decode ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [
        ("plain", "plain"),
        ("", ""),
        ("a%20b", "a b"),
        ("a%2Fb", "a/b"),
        ("a%2fb", "a/b"),
        ("caf%C3%A9", "café"),
        ("%E2%9C%93", "✓"),
        ("100%25", "100%"),
        ("a+b", "a+b"),
        ("déjà", "déjà"),  # characters outside escapes are kept
    ],
)
def test_percent_decode(encoded: str, decoded: str) -> None:
    assert percent_decode(encoded) == decoded


def test_percent_decode_plus_is_space_only_when_asked() -> None:
    assert percent_decode("a+b%2B", plus_is_space=True) == "a b+"
    assert percent_decode("a+b%2B") == "a+b+"


@pytest.mark.parametrize("bad", ["%zz", "%", "%4", "a%g0", "%0g", "abc%", "%ff", "%C3", "%e9t%e9"])
def test_percent_decode_rejects_invalid_escapes_and_utf8(bad: str) -> None:
    with pytest.raises(ValueError):
        percent_decode(bad)


def _reference_unescape(raw: bytes, plus_is_space: bool) -> str:
    """Percent-decoding the obvious way, one byte at a time."""
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i : i + 1] == b"%":
            pair = raw[i + 1 : i + 3]
            if (
                len(pair) < 2
                or not pair.isascii()
                or not all(chr(c) in "0123456789abcdefABCDEF" for c in pair)
            ):
                raise ValueError("invalid escape")
            out.append(int(pair, 16))
            i += 3
        else:
            out += b" " if plus_is_space and raw[i : i + 1] == b"+" else raw[i : i + 1]
            i += 1
    return out.decode("utf-8")


def _outcome(decode: object, *args: object) -> object:
    try:
        return decode(*args)  # type: ignore[operator]
    except ValueError:
        return ValueError


def test_unescape_agrees_with_a_byte_by_byte_decoder() -> None:
    # every text of up to four of these bytes: escapes cut short, "=" (what unescape maps
    # "%" to), line breaks (a soft line break to quoted-printable), UTF-8 and 0xFF
    alphabet = [b"%", b"=", b"+", b"4", b"F", b"f", b"g", b"\r", b"\n", b"\xc3", b"\xa9", b"\xff"]
    for size in range(5):
        for letters in itertools.product(alphabet, repeat=size):
            raw = b"".join(letters)
            for plus in (False, True):
                expected = _outcome(_reference_unescape, raw, plus)
                got = _outcome(lambda r, p: unescape(r, plus_is_space=p).decode(), raw, plus)
                assert got == expected, (raw, plus)


def test_decoding_errors_do_not_repeat_the_input() -> None:
    for bad in ["a=%zz" + "x" * 100_000, "a=" + "x" * 100_000 + "%ff"]:
        with pytest.raises(ValueError) as info:
            parse_query(bad)
        assert len(str(info.value)) < 200


# -- parse_query ------------------------------------------------------------------------------


def test_parse_query_pairs_in_order() -> None:
    assert parse_query("a=1&b=2&a=3") == [("a", "1"), ("b", "2"), ("a", "3")]


def test_parse_query_empty() -> None:
    assert parse_query("") == []
    assert parse_query("&&") == []


def test_parse_query_edge_pieces() -> None:
    assert parse_query("flag&x=&=v&&y=a=b") == [("flag", ""), ("x", ""), ("", "v"), ("y", "a=b")]


def test_parse_query_decodes_plus_and_escapes() -> None:
    assert parse_query("q=hello+world&s=%2B1&k%20ey=caf%C3%A9") == [
        ("q", "hello world"),
        ("s", "+1"),
        ("k ey", "café"),
    ]


@pytest.mark.parametrize("bad", ["a=%zz", "%zz=1", "a=%ff", "a=1&b=%"])
def test_parse_query_rejects_invalid_encoding(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_query(bad)


def test_parse_query_field_limit() -> None:
    assert MAX_QUERY_FIELDS == 1000
    at_limit = "&".join(f"k{i}={i}" for i in range(1000))
    pairs = parse_query(at_limit)
    assert len(pairs) == 1000
    assert pairs[-1] == ("k999", "999")
    with pytest.raises(ValueError):
        parse_query(at_limit + "&one=more")


def test_parse_query_limit_ignores_empty_pieces() -> None:
    query = "&".join(["a=1"] * 1000) + "&&&"
    assert len(parse_query(query)) == 1000


def test_parse_query_skips_a_flood_of_separators() -> None:
    assert parse_query(b"&" * 100_000 + b"a=1" + b"&" * 100_000) == [("a", "1")]
    spread = b"&" * 5000 + (b"k=v" + b"&" * 5000) * 1000
    assert len(parse_query(spread)) == 1000
    with pytest.raises(ValueError, match="more than 1000"):
        parse_query(spread + b"one=more")


def test_parse_query_takes_bytes() -> None:
    assert parse_query(b"q=caf%C3%A9&e=\xc3\xa9") == [("q", "café"), ("e", "é")]
    with pytest.raises(ValueError):
        parse_query(b"q=\xff")


_AWKWARD_QUERIES = [
    b"a=1&bb=22&ccc=333",
    b"&&name=caf%C3%A9+au+lait&&flag&=v&",
    b"x=%41%42%43&y=%e2%9c%93",
    b"k=a%3D%26b&k%3D=c",
    b"%zz=1",
    b"a=%4",
    b"a=%C3&b=%A9",
    b"a=\xc3&b=\xa9",
    b"a=%%41",
    b"a=%=1",
]


@pytest.mark.parametrize("query", _AWKWARD_QUERIES)
def test_query_decoder_gives_the_same_pairs_however_the_bytes_are_cut(query: bytes) -> None:
    expected = _outcome(parse_query, query)
    for cuts in itertools.chain(
        itertools.combinations(range(1, len(query)), 1),
        itertools.combinations(range(1, len(query)), 2),
    ):
        decoder = QueryDecoder()

        def fed(cuts: tuple[int, ...] = cuts, decoder: QueryDecoder = decoder) -> object:
            for start, end in itertools.pairwise((0, *cuts, len(query))):
                decoder.feed(query[start:end])
            return decoder.finish()

        assert _outcome(fed) == expected, cuts


def test_query_decoder_refuses_a_field_too_many_as_it_begins() -> None:
    decoder = QueryDecoder(max_fields=2)
    decoder.feed(b"a=1&b=")
    decoder.feed(b"2&")
    with pytest.raises(ValueError, match="more than 2"):
        decoder.feed(b"c")


def test_parse_query_custom_limit() -> None:
    assert len(parse_query("a&b&c", max_fields=3)) == 3
    with pytest.raises(ValueError):
        parse_query("a&b&c&d", max_fields=3)


# -- split_target and Uri ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/", ("/", "")),
        ("/path", ("/path", "")),
        ("/path?a=1&b=2", ("/path", "a=1&b=2")),
        ("/path?", ("/path", "")),
        ("/p?q=a?b", ("/p", "q=a?b")),
        ("http://example.com/p/q?x=1", ("/p/q", "x=1")),
        ("https://example.com:8443/a%20b", ("/a%20b", "")),
        ("http://example.com", ("/", "")),
        ("http://example.com?x=1", ("/", "x=1")),
        ("http://example.com/", ("/", "")),
    ],
)
def test_split_target(target: str, expected: tuple[str, str]) -> None:
    assert split_target(target) == expected


def test_uri_parts_and_str() -> None:
    uri = Uri.parse("/files/a%20b%2Fc?x=1")
    assert uri.raw_path == "/files/a%20b%2Fc"
    assert uri.path == "/files/a b/c"
    assert uri.query == "x=1"
    assert str(uri) == "/files/a%20b%2Fc?x=1"


def test_uri_from_absolute_form_is_origin_form() -> None:
    uri = Uri.parse("http://example.com/a?b=c")
    assert uri.raw_path == "/a"
    assert uri.query == "b=c"
    assert str(uri) == "/a?b=c"


def test_uri_without_query() -> None:
    uri = Uri("/plain")
    assert uri.query == ""
    assert str(uri) == "/plain"
    assert uri.path == "/plain"


def test_uri_equality_and_hash() -> None:
    assert Uri.parse("/a?b=1") == Uri("/a", "b=1")
    assert Uri.parse("/a?b=1") == "/a?b=1"
    assert Uri("/a") != Uri("/b")
    assert hash(Uri.parse("/a?b=1")) == hash(Uri("/a", "b=1"))
    assert "/a" in repr(Uri("/a"))


def test_uri_path_with_invalid_encoding_raises() -> None:
    uri = Uri("/bad%zz")
    assert uri.raw_path == "/bad%zz"
    with pytest.raises(ValueError):
        _ = uri.path


# -- Method -----------------------------------------------------------------------------------

KNOWN = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"]


@pytest.mark.parametrize("name", KNOWN)
def test_method_constants(name: str) -> None:
    method = getattr(Method, name)
    assert isinstance(method, Method)
    assert isinstance(method, str)
    assert method == name
    assert str(method) == name
    assert repr(method) == f"Method.{name}"
    assert hash(method) == hash(name)
    assert {name: 1}[method] == 1


@pytest.mark.parametrize("name", KNOWN)
def test_method_of_returns_the_interned_constant(name: str) -> None:
    constant = getattr(Method, name)
    assert Method.of(name) is constant
    assert Method.of(name.encode()) is constant


def test_method_of_an_extension_method() -> None:
    purge = Method.of("PURGE")
    assert isinstance(purge, Method)
    assert purge == "PURGE"
    assert repr(purge) == "Method('PURGE')"
    assert Method.of(b"PROPFIND") == "PROPFIND"
    assert isinstance(Method.of(b"PROPFIND"), Method)


def test_method_comparisons() -> None:
    assert Method.GET != Method.POST
    assert Method.GET != "get"  # methods are case-sensitive
    assert f"{Method.DELETE}" == "DELETE"
