"""The strict chunked-body framing check that runs before h11 decodes a body (sans-I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe._protocol.chunked import ChunkedFraming
from trioframe._protocol.errors import ProtocolError
from trioframe._protocol.head import HeadLimits

NEXT = b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n"  # a pipelined request after the body


def released(body: bytes, limits: HeadLimits | None = None, *, step: int = 0) -> int:
    """Feed ``body`` (all at once, or ``step`` bytes per read) the way the adapter does:
    the released bytes leave the buffer. Returns how many bytes were released in all; the
    framing must be complete."""
    framing = ChunkedFraming(limits or HeadLimits())
    buffer = bytearray()
    total = 0
    for start in range(0, len(body), step or len(body)):
        buffer += body[start : start + (step or len(body))]
        size = framing.check(buffer)
        del buffer[:size]
        total += size
    assert framing.done
    return total


def status(body: bytes, limits: HeadLimits | None = None, *, step: int = 0) -> int:
    try:
        released(body, limits, step=step)
    except ProtocolError as exc:
        return exc.status
    return 200


VALID = {
    "one chunk": b"5\r\nhello\r\n0\r\n\r\n",
    "no chunk": b"0\r\n\r\n",
    "upper-case hex and leading zeros": b"000A\r\n0123456789\r\n0000\r\n\r\n",
    "sixteen hex digits": b"0000000000000003\r\nabc\r\n0\r\n\r\n",
    "extensions": b'3;a;b=c;d="q \\" x"\r\nabc\r\n0;last\r\n\r\n',
    "whitespace around ; and =": b"3;\ta = b\t; c\r\nabc\r\n0\r\n\r\n",
    "trailer fields": b"3\r\nabc\r\n0\r\nX-Sum: 1 2\t3\r\nEmpty:\r\nY:  z  \r\n\r\n",
    "binary data with CR and LF": b"4\r\n\r\n\n\r\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("body", VALID.values(), ids=VALID.keys())
@pytest.mark.parametrize("step", [0, 1, 2, 7])
def test_valid_bodies_are_released_up_to_their_end(body: bytes, step: int) -> None:
    assert released(body + NEXT, step=step) == len(body)


REFUSED = {
    "whitespace between the size and the first ;": b"3 ;a\r\nabc\r\n0\r\n\r\n",
    "bare LF ending the trailer section": b"0\r\n\n",
    "bare LF ending a trailer field": b"0\r\nX: y\n\r\n",
    "bare LF ending the chunk-size line": b"5\nhello\r\n0\r\n\r\n",
    "bare LF after chunk data": b"5\r\nhello\n0\r\n\r\n",
    "bare CR in the chunk-size line": b"5\r;a\r\nhello\r\n0\r\n\r\n",
    "obs-fold in the trailer": b"0\r\nX: y\r\n z\r\n\r\n",
    "obs-fold with a tab in the trailer": b"0\r\nX: y\r\n\tz\r\n\r\n",
    "trailer line starting with a space": b"0\r\n X: y\r\n\r\n",
    "control character in a trailer value": b"0\r\nX: a\x01b\r\n\r\n",
    "NUL in a trailer value": b"0\r\nX: a\x00b\r\n\r\n",
    "DEL in a trailer value": b"0\r\nX: a\x7fb\r\n\r\n",
    "trailer line without a colon": b"0\r\nX y\r\n\r\n",
    "space before the colon in a trailer": b"0\r\nX : y\r\n\r\n",
    "CR inside a chunk extension": b"5;a\rb\r\nhello\r\n0\r\n\r\n",
    "NUL inside a chunk extension": b"5;a\x00\r\nhello\r\n0\r\n\r\n",
    "DEL inside a chunk extension": b"5;a=\x7f\r\nhello\r\n0\r\n\r\n",
    "NUL inside a quoted extension value": b'5;a="\x00"\r\nhello\r\n0\r\n\r\n',
    "space after the chunk size": b"5 \r\nhello\r\n0\r\n\r\n",
    "tab after the chunk size": b"5\t\r\nhello\r\n0\r\n\r\n",
    "junk after the chunk size": b"5x\r\nhello\r\n0\r\n\r\n",
    "space after the last chunk size": b"0 \r\n\r\n",
    "space before the chunk size": b" 5\r\nhello\r\n0\r\n\r\n",
    "0x prefix": b"0x5\r\nhello\r\n0\r\n\r\n",
    "sign": b"+5\r\nhello\r\n0\r\n\r\n",
    "empty chunk size": b"\r\nhello\r\n0\r\n\r\n",
    "empty extension name": b"5;\r\nhello\r\n0\r\n\r\n",
    "empty extension value": b"5;a=\r\nhello\r\n0\r\n\r\n",
    "unterminated quoted value": b'5;a="b\r\nhello\r\n0\r\n\r\n',
    "whitespace after the extension": b"5;a \r\nhello\r\n0\r\n\r\n",
    "seventeen hex digits": b"00000000000000005\r\nhello\r\n0\r\n\r\n",
    "a hundred hex digits": b"f" * 100 + b"\r\nhello\r\n0\r\n\r\n",
    "chunk data longer than its size": b"5\r\nhello!\r\n0\r\n\r\n",
    "chunk data shorter than its size": b"5\r\nhell\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("body", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("step", [0, 1])
def test_malformed_framing_is_400(body: bytes, step: int) -> None:
    assert status(body + NEXT, step=step) == 400


def test_an_incomplete_body_is_held_until_its_lines_are_complete() -> None:
    framing = ChunkedFraming(HeadLimits())
    assert framing.check(b"5") == 0  # a chunk-size line without its end
    assert framing.check(b"5\r\nhel") == 6  # the line and the data so far
    assert framing.check(b"lo\r") == 2  # the CR after the data waits for its LF
    assert framing.check(b"\r\n0\r\nX: 1\r\n") == 5  # trailer fields wait for the section end
    assert framing.check(b"X: 1\r\n\r\nGET") == 8
    assert framing.done
    assert framing.check(b"GET") == 0


@pytest.mark.parametrize(("extra", "expected"), [(-1, 200), (0, 200), (1, 400)])
def test_chunk_size_line_limit_is_max_request_line_size(extra: int, expected: int) -> None:
    limits = HeadLimits(max_request_line_size=32)
    line = b"5;n=" + b"v" * (32 - 4 + extra)  # 31, 32 or 33 bytes without the CRLF
    body = line + b"\r\nhello\r\n0\r\n\r\n"
    assert status(body, limits) == expected
    assert status(body, limits, step=1) == expected


def test_chunk_size_line_without_its_end_is_refused_once_past_the_limit() -> None:
    framing = ChunkedFraming(HeadLimits(max_request_line_size=32))
    assert framing.check(b"5;n=" + b"v" * 29) == 0  # 33 bytes: the CR of a 32-byte line?
    with pytest.raises(ProtocolError) as info:
        framing.check(b"5;n=" + b"v" * 30)  # 34 bytes and no LF: the line is over 32
    assert info.value.status == 400


@pytest.mark.parametrize(("extra", "expected"), [(-1, 200), (0, 200), (1, 431)])
def test_trailer_section_size_limit_is_max_head_size(extra: int, expected: int) -> None:
    limits = HeadLimits(max_head_size=64)
    field = b"X: " + b"v" * (64 - 3 - 4 + extra) + b"\r\n"
    section = field + b"\r\n"  # 63, 64 or 65 bytes with the final CRLF
    assert len(section) == 64 + extra
    body = b"0\r\n" + section
    assert status(body, limits) == expected
    assert status(body, limits, step=1) == expected


@pytest.mark.parametrize(("count", "expected"), [(2, 200), (3, 200), (4, 431)])
def test_trailer_field_count_limit_is_max_header_count(count: int, expected: int) -> None:
    body = b"0\r\n" + b"X: 1\r\n" * count + b"\r\n"
    assert status(body, HeadLimits(max_header_count=3)) == expected


def test_a_trailer_field_without_its_end_is_refused_once_past_the_size_limit() -> None:
    framing = ChunkedFraming(HeadLimits(max_head_size=16))
    framing.check(b"0\r\n")
    assert framing.check(b"X: " + b"v" * 11) == 0  # 14 bytes without an LF: not over yet
    with pytest.raises(ProtocolError) as info:
        framing.check(b"X: " + b"v" * 12 + b"\r")
    assert info.value.status == 431


class CountingBuffer(bytearray):
    """A buffer that adds up how many bytes its ``find`` calls look at."""

    looked_at = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        stop = len(self) if end is None else min(end, len(self))
        CountingBuffer.looked_at += max(stop - (start or 0), 0)
        return super().find(sub, start, end)


def test_a_long_line_arriving_a_byte_at_a_time_is_searched_once() -> None:
    CountingBuffer.looked_at = 0
    line = b"5;n=" + b"v" * 4000 + b"\r\n"
    framing = ChunkedFraming(HeadLimits())
    buffer = CountingBuffer()
    for byte in line:
        buffer.append(byte)
        del buffer[: framing.check(buffer)]
    assert not buffer
    assert CountingBuffer.looked_at <= 2 * len(line)  # quadratic would be ~8 million
