"""The strict head checks that run before h11 sees a request (sans-I/O, synchronous)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._protocol import head as head_module
from trioframe._protocol.errors import ProtocolError
from trioframe._protocol.head import HeadLimits, HeadScanner, check_head, check_host, check_target

OK = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
LIMITS = HeadLimits()


def status(head: bytes, limits: HeadLimits | None = None) -> int:
    try:
        check_head(head, limits or HeadLimits())
    except ProtocolError as exc:
        return exc.status
    return 200


def test_a_plain_head_passes() -> None:
    assert status(OK) == 200
    assert status(b"GET http://example.com/x?y HTTP/1.0\r\nHost: a\r\n\r\n") == 200
    for target in (
        b"https://a",
        b"http://a?x",
        b"http://a:8080/x",
        b"http://[::1]:80/x",
        b"http://a%2Db.example:/x",
    ):
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
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + b"1".zfill(21) + b"\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + b"1".zfill(4301) + b"\r\n\r\n", 400),
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
        (b"GET http://a%zz/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),  # not a valid Host value
        (b"GET http://a:8x/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://[::1/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET http://a|b/e HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ],
)
def test_rejected_heads(head: bytes, expected: int) -> None:
    assert status(head) == expected


@pytest.mark.parametrize("digits", [19, 20])
def test_a_content_length_of_up_to_20_digits_passes(digits: int) -> None:
    head = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + b"9" * digits + b"\r\n\r\n"
    assert status(head) == 200


REFUSED_TARGETS = {
    b"/a#b": "fragment",
    b"/a#": "fragment",
    b"/a?b=1#c": "fragment",
    b"http://a/b#c": "fragment",
    b"http://a#c": "fragment",
    b"/a%00": "percent-encoded NUL",
    b"/%00/b": "percent-encoded NUL",
    b"/a?b=%00": "percent-encoded NUL",
    b"/a?%00=b": "percent-encoded NUL",
    b"/a?b=c%000": "percent-encoded NUL",
    b"http://a/b%00": "percent-encoded NUL",
    b"http://a%00/": "percent-encoded NUL",
    b"/a\x80": "invalid characters",
    b"/\xc3\xa9": "invalid characters",
    b"/a\tb": "invalid characters",
}


@pytest.mark.parametrize("target", REFUSED_TARGETS)
def test_a_target_with_a_fragment_a_percent_encoded_nul_or_a_byte_outside_visible_ascii_is_400(
    target: bytes,
) -> None:
    for check in (check_target, lambda t: check_head(b"GET " + t + b" HTTP/1.1\r\n\r\n", LIMITS)):
        with pytest.raises(ProtocolError) as info:
            check(target)
        assert info.value.status == 400
        assert info.value.message == f"{REFUSED_TARGETS[target]} in the request target"


@pytest.mark.parametrize(
    "target",
    [
        b"/a%20b?c=%2500&d=%41",
        b"/%0a%01%30%300",
        b"/%",
        b"/a%0",
        b"/~!$&'()*+,;=:@?/?",
        b"/%25%30%30",
    ],
)
def test_escapes_other_than_a_nul_pass(target: bytes) -> None:
    check_target(target)
    assert status(b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n") == 200


_TARGET_BYTES = st.sampled_from(list(b"/a0%#? \t\x80\x7f~"))


@settings(max_examples=2000, deadline=None)
@given(st.lists(_TARGET_BYTES, max_size=10).map(lambda rest: b"/" + bytes(rest)))
def test_the_target_fast_path_accepts_exactly_what_the_rules_accept(target: bytes) -> None:
    try:
        check_target(target)
    except ProtocolError:
        accepted = False
    else:
        accepted = True
    visible = all(0x21 <= byte < 0x7F for byte in target)
    assert accepted == (visible and b"#" not in target and b"%00" not in target)


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


def partial_status(partial: bytes, limits: HeadLimits | None = None) -> int:
    """What ``HeadScanner`` says about an incomplete head given in one piece (0: wait)."""
    try:
        assert HeadScanner(limits or HeadLimits()).find_end(partial) == 0
    except ProtocolError as exc:
        return exc.status
    return 0


def test_partial_head_limits() -> None:
    limits = HeadLimits(max_head_size=100, max_request_line_size=50)
    assert partial_status(b"GET /" + b"a" * 45, limits) == 0  # 50 bytes, no CR yet: may fit
    assert partial_status(b"GET /" + b"a" * 46, limits) == 414
    assert partial_status(b"GET /" + b"a" * 45 + b"\r", limits) == 0  # 50 bytes, then CR LF
    assert partial_status(b"GET / HTTP/1.1\r\n" + b"X" * 84, limits) == 0  # exactly 100
    assert partial_status(b"GET / HTTP/1.1\r\n" + b"X" * 85, limits) == 431


@pytest.mark.parametrize(
    "partial",
    [
        b"GET / HTTP/1.1\nHost: a\n",  # bare LF line ends
        b"GET / HTTP/1.1\r\nHost: a\n",
        b"\n",
        b"GET / HTTP/1.1\r\nHost: a\rX",  # a CR followed by something else than LF
        b"GET / HTTP/1.1\r\nX: \x00",  # a forbidden character
    ],
)
@pytest.mark.parametrize("step", [0, 1])
def test_a_partial_head_that_cannot_become_valid_is_refused_at_once(
    partial: bytes, step: int
) -> None:
    scanner = HeadScanner(HeadLimits())
    buffer = bytearray()
    with pytest.raises(ProtocolError) as info:
        for start in range(0, len(partial), step or len(partial)):
            buffer += partial[start : start + (step or len(partial))]
            assert scanner.find_end(buffer) == 0
    assert info.value.status == 400


def test_a_head_arriving_a_byte_at_a_time_is_found_and_not_checked_past_its_end() -> None:
    scanner = HeadScanner(HeadLimits())
    head = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    buffer = bytearray()
    for byte in head[:-1]:
        buffer.append(byte)
        assert scanner.find_end(buffer) == 0
    buffer += b"\n\x00\nbody"  # the last byte of the head, then bytes that are not ours
    assert scanner.find_end(buffer) == len(head)


class CountingBuffer(bytearray):
    """A buffer that adds up how many bytes its searches and slices look at."""

    looked_at = 0

    @staticmethod
    def _span(size: int, start: int | None, end: int | None) -> int:
        stop = size if end is None else min(end, size)
        return max(stop - (start or 0), 0)

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        CountingBuffer.looked_at += self._span(len(self), start, end)
        return super().find(sub, start, end)

    def count(self, sub: Any, start: Any = None, end: Any = None) -> int:
        CountingBuffer.looked_at += self._span(len(self), start, end)
        return super().count(sub, start, end)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            CountingBuffer.looked_at += self._span(len(self), key.start, key.stop)
        return super().__getitem__(key)


def test_a_head_arriving_a_byte_at_a_time_is_scanned_in_linear_time() -> None:
    CountingBuffer.looked_at = 0
    limits = HeadLimits(max_head_size=64 * 1024, max_request_line_size=32 * 1024)
    head = b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n" + b"X: 1\r\n" * 2000 + b"\r\n"
    scanner = HeadScanner(limits)
    buffer = CountingBuffer()
    for byte in head:
        buffer.append(byte)
        size = scanner.find_end(buffer)
    assert size == len(head)
    assert CountingBuffer.looked_at < 20 * len(head)  # quadratic would be ~10**9


_HOST_BYTES = st.sampled_from(list(b"az09AZ.-:[]@%_~!$&'()*+,;=/ \x80"))


@settings(max_examples=2000, deadline=None)
@given(st.lists(_HOST_BYTES, max_size=14).map(bytes))
def test_the_host_fast_path_accepts_exactly_what_the_pattern_accepts(value: bytes) -> None:
    try:
        check_host(value)
    except ProtocolError:
        accepted = False
    else:
        accepted = True
    assert accepted == (head_module._HOST.fullmatch(value) is not None)
