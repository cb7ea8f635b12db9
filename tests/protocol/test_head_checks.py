"""The strict head checks that run before h11 sees a request (sans-I/O, synchronous)."""

from __future__ import annotations

import pytest

from trioframe._protocol.errors import ProtocolError
from trioframe._protocol.head import HeadLimits, check_head, check_partial_head

OK = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"


def status(head: bytes, limits: HeadLimits | None = None) -> int:
    try:
        check_head(head, limits or HeadLimits())
    except ProtocolError as exc:
        return exc.status
    return 200


def test_a_plain_head_passes() -> None:
    assert status(OK) == 200
    assert status(b"GET http://example.com/x?y HTTP/1.0\r\nHost: a\r\n\r\n") == 200
    for target in (b"https://a", b"http://a?x", b"http://a:8080/x", b"http://[::1]:80/x"):
        assert status(b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n") == 200


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        (b"PRI * HTTP/2.0\r\n\r\n", 505),
        (b"GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
        (b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET /\r\nHost: a\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400),
        (
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            400,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: a\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n",
            400,
        ),
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        (b"GET http:///e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://?x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://#x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET https:// HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://:80/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://@/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://user@a/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET ftp://a/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ],
)
def test_rejected_heads(head: bytes, expected: int) -> None:
    assert status(head) == expected


def test_head_size_limit_counts_the_whole_head() -> None:
    limit = len(OK) + 10
    padded = OK[:-2] + b"X: " + b"a" * 5 + b"\r\n\r\n"  # len(OK) + 10 bytes
    assert len(padded) == limit
    assert status(padded, HeadLimits(max_head_size=limit)) == 200
    assert status(padded, HeadLimits(max_head_size=limit - 1)) == 431


def test_request_line_limit() -> None:
    line = b"GET /" + b"a" * 95 + b" HTTP/1.1"  # 109 bytes
    head = line + b"\r\nHost: a\r\n\r\n"
    assert status(head, HeadLimits(max_request_line_size=len(line))) == 200
    assert status(head, HeadLimits(max_request_line_size=len(line) - 1)) == 414


def test_header_count_limit() -> None:
    head = b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n"  # three header fields
    assert status(head, HeadLimits(max_header_count=3)) == 200
    assert status(head, HeadLimits(max_header_count=2)) == 431
    assert status(head, HeadLimits(max_header_count=4)) == 200


def test_partial_head_limits() -> None:
    limits = HeadLimits(max_head_size=100, max_request_line_size=50)
    check_partial_head(b"GET /" + b"a" * 45, limits)  # 50 bytes, no CRLF yet: may still fit
    with pytest.raises(ProtocolError) as info:
        check_partial_head(b"GET /" + b"a" * 46, limits)
    assert info.value.status == 414
    check_partial_head(b"GET / HTTP/1.1\r\n" + b"X" * 84, limits)  # exactly 100
    with pytest.raises(ProtocolError) as info:
        check_partial_head(b"GET / HTTP/1.1\r\n" + b"X" * 85, limits)
    assert info.value.status == 431
