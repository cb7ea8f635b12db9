"""HTTP/2 request heads (RFC 9113 section 8): what a valid head becomes, and every malformed
shape answered on its stream with the right status."""

from __future__ import annotations

import pytest

from trioframe._http.headers import Header
from trioframe._protocol.http2_head import MalformedHead, read_request_head
from trioframe._protocol.request_head import RequestHead

GET = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"example.org"),
    (b":path", b"/items?page=2"),
]


def read(headers: list[Header], *, count: int = 100, size: int = 32 * 1024) -> RequestHead:
    return read_request_head(
        headers, max_header_count=count, max_header_list_size=size, connect_protocol=True
    )


def test_a_valid_head_reads_like_http1() -> None:
    head = read_request_head(
        [*GET, (b"accept", b"*/*"), (b"cookie", b"a=1"), (b"cookie", b"b=2")],
        max_header_count=100,
        max_header_list_size=32 * 1024,
        connect_protocol=True,
    )
    assert head.method == b"GET" and head.target == b"/items?page=2" and head.version == "2"
    # :authority becomes Host (first), cookie fields are joined (RFC 9113 8.2.3)
    assert head.headers == [
        (b"host", b"example.org"),
        (b"accept", b"*/*"),
        (b"cookie", b"a=1; b=2"),
    ]
    assert head.content_length is None and head.protocol is None


def test_content_length_and_extended_connect() -> None:
    head = read_request_head(
        [*GET[:1], *GET[1:], (b"content-length", b"12")],
        max_header_count=100,
        max_header_list_size=32 * 1024,
        connect_protocol=True,
    )
    assert head.content_length == 12
    connect = [
        (b":method", b"CONNECT"),
        (b":protocol", b"websocket"),
        (b":scheme", b"https"),
        (b":authority", b"example.org"),
        (b":path", b"/ws"),
    ]
    head = read_request_head(
        connect, max_header_count=100, max_header_list_size=32 * 1024, connect_protocol=True
    )
    assert head.protocol == "websocket" and head.method == b"CONNECT"
    assert head.bodyless  # its DATA frames are the tunnel's, not a body to read


def test_a_matching_host_field_is_kept_once() -> None:
    head = read_request_head(
        [*GET, (b"host", b"example.org")],
        max_header_count=100,
        max_header_list_size=32 * 1024,
        connect_protocol=True,
    )
    assert [v for n, v in head.headers if n == b"host"] == [b"example.org"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([(b"accept", b"x"), *GET], 400),  # pseudo-header after a regular field
        ([*GET, (b":status", b"200")], 400),  # a response pseudo-header
        ([*GET, (b":method", b"POST")], 400),  # repeated
        ([*GET, (b":foo", b"x")], 400),  # unknown
        (GET[1:], 400),  # no :method
        ([(b":method", b"G\xc3\x89T"), *GET[1:]], 400),  # not a token
        ([(b":method", b"GET /"), *GET[1:]], 400),
        ([(b":method", b""), *GET[1:]], 400),
        ([GET[0], GET[2], GET[3]], 400),  # no :scheme
        (GET[:3], 400),  # no :path
        ([*GET[:3], (b":path", b"")], 400),
        ([*GET[:3], (b":path", b"items")], 400),  # not absolute
        ([*GET[:3], (b":path", b"/items#top")], 400),  # a fragment
        ([*GET[:3], (b":path", b"/items?page=2#top")], 400),
        ([*GET[:3], (b":path", b"/items%00")], 400),  # a percent-encoded NUL
        ([*GET[:3], (b":path", b"/items?page=%00")], 400),
        ([*GET[:3], (b":path", b"/caf\xc3\xa9")], 400),  # bytes outside visible ASCII
        ([*GET[:3], (b":path", b"/a b")], 400),
        ([*GET[:3], (b":path", b"/a\x7f")], 400),
        ([*GET, (b"Accept", b"x")], 400),  # upper case
        ([*GET, (b"acc ept", b"x")], 400),
        ([*GET, (b"accept", b" x")], 400),  # leading space
        ([*GET, (b"accept", b"x\t")], 400),  # trailing tab
        ([*GET, (b"accept", b"a\x00b")], 400),
        ([*GET, (b"accept", b"a\nb")], 400),
        ([*GET, (b"connection", b"keep-alive")], 400),
        ([*GET, (b"transfer-encoding", b"chunked")], 400),
        ([*GET, (b"upgrade", b"websocket")], 400),
        ([*GET, (b"keep-alive", b"5")], 400),
        ([*GET, (b"proxy-connection", b"x")], 400),
        ([*GET, (b"te", b"gzip")], 400),
        ([*GET, (b"host", b"other.org")], 400),  # differs from :authority
        ([*GET[:2], GET[3], (b"host", b"a"), (b"host", b"b")], 400),
        ([*GET[:2], (b":authority", b"bad host"), GET[3]], 400),
        ([*GET, (b"content-length", b"x")], 400),
        ([*GET, (b"content-length", b"1"), (b"content-length", b"2")], 400),
        ([(b":method", b"CONNECT"), (b":authority", b"example.org:443")], 501),
        ([*GET, (b":protocol", b"websocket")], 400),  # :protocol outside CONNECT
    ],
)
def test_malformed_heads(headers: list[Header], status: int) -> None:
    with pytest.raises(MalformedHead) as info:
        read(headers)
    assert info.value.status == status


def test_a_path_with_escapes_other_than_a_nul_and_options_star_pass() -> None:
    head = read([*GET[:3], (b":path", b"/a%20b?c=%2500")])
    assert head.target == b"/a%20b?c=%2500"
    options = [(b":method", b"OPTIONS"), *GET[1:3], (b":path", b"*")]
    assert read(options).target == b"*"


def test_te_trailers_is_allowed() -> None:
    read([*GET, (b"te", b"trailers")])


def test_without_announcing_extended_connect_protocol_is_refused() -> None:
    connect = [
        (b":method", b"CONNECT"),
        (b":protocol", b"websocket"),
        (b":scheme", b"https"),
        (b":authority", b"example.org"),
        (b":path", b"/ws"),
    ]
    with pytest.raises(MalformedHead):
        read_request_head(
            connect, max_header_count=100, max_header_list_size=32 * 1024, connect_protocol=False
        )


def test_header_count_limit_at_n_minus_1_n_n_plus_1() -> None:
    def fields(n: int) -> list[Header]:
        return [*GET, *((b"x-%d" % i, b"v") for i in range(n - 1))]  # + host = n fields

    read(fields(9), count=10)
    read(fields(10), count=10)
    with pytest.raises(MalformedHead) as info:
        read(fields(11), count=10)
    assert info.value.status == 431


def test_header_list_size_limit_at_n_minus_1_n_n_plus_1() -> None:
    size = sum(len(n) + len(v) + 32 for n, v in GET)
    read(GET, size=size + 1)
    read(GET, size=size)
    with pytest.raises(MalformedHead) as info:
        read(GET, size=size - 1)
    assert info.value.status == 431


def test_fields_found_valid_are_remembered_and_invalid_ones_never_are() -> None:
    from trioframe._protocol import http2_head

    good = (b"x-client", b"one")
    read([*GET, good])
    assert good in http2_head._VALID_FIELDS
    assert read([*GET, good]).headers[-1] == good  # the second time from the set
    for bad in [(b"x-client", b"one\r\n"), (b"X-Client", b"one"), (b"connection", b"close")]:
        for _ in range(2):
            with pytest.raises(MalformedHead):
                read([*GET, bad])
        assert bad not in http2_head._VALID_FIELDS
    for n in range(3 * http2_head._MAX_VALID_FIELDS):
        read([*GET, (b"x-n", b"%d" % n)])
    assert len(http2_head._VALID_FIELDS) <= http2_head._MAX_VALID_FIELDS
