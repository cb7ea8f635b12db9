"""Hypothesis strategies for the HTTP/2 fuzz target: streams of mixed frames, each kind often
repeated until it fills whole reads.

A ``FrameStream`` is drawn piece by piece: a frame of any kind (a request head, maybe split
into CONTINUATION frames, maybe malformed; trailers; DATA of any size, maybe padded, on any
stream; PRIORITY, RST_STREAM, SETTINGS with valid and invalid values, PING, WINDOW_UPDATE
with any increment, GOAWAY, PUSH_PROMISE, stray CONTINUATION, unknown types; a frame header
announcing more than the frame size; a few random bytes), repeated once, a few times or by
the thousand. Request heads are HPACK-encoded in the order they are sent by the client's
own encoder, so that the server's decoder stays in step unless the stream breaks the
compression state on purpose (a head repeated byte for byte, a byte mutation)."""

from __future__ import annotations

import attrs
import hpack
from hypothesis import strategies as st

from tests.http2.support import (
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADERS,
    PADDED,
    PREFACE,
    frame,
    ping,
    priority,
    request_fields,
    rst_stream,
    settings_frame,
    window_update,
)

READ = 64 * 1024  # what the server reads at once
GOAWAY, PUSH_PROMISE = 7, 5
PATHS = [b"/", b"/echo", b"/info", b"/wait/w", b"/big/20000", b"/nowhere"]
MALFORMED = [
    (b"Upper-Case", b"x"),
    (b"connection", b"close"),
    (b"content-length", b"x"),
    (b"te", b"gzip"),
    (b":path", b"/again"),
]
#: stream ids: the first few odd ones (open, then closed), even ones, one far ahead
STREAM_IDS = st.one_of(st.integers(0, 40).map(lambda n: 2 * n + 1), st.sampled_from([0, 2, 1001]))


@attrs.frozen
class FrameStream:
    """The client's bytes, cut into the reads it sends."""

    reads: list[bytes]


class _Heads:
    """Request heads, HPACK-encoded in sending order by the client's one encoder."""

    def __init__(self) -> None:
        self.encoder = hpack.Encoder()
        self.next_stream = 1

    def block(self, fields: list[tuple[bytes, bytes]]) -> bytes:
        return bytes(self.encoder.encode(fields))

    def new_stream(self) -> int:
        self.next_stream += 2
        return self.next_stream - 2


def _head_frames(stream_id: int, block: bytes, end: int, pieces: int) -> bytes:
    """A header block in a HEADERS frame and ``pieces - 1`` CONTINUATION frames."""
    if pieces == 1:
        return frame(HEADERS, END_HEADERS | end, stream_id, block)
    size = max(1, len(block) // pieces)
    cut = [block[i : i + size] for i in range(0, len(block), size)][:pieces]
    cut += [b""] * (pieces - len(cut))
    out = frame(HEADERS, end, stream_id, cut[0])
    for index, piece in enumerate(cut[1:], 1):
        out += frame(CONTINUATION, END_HEADERS if index == pieces - 1 else 0, stream_id, piece)
    return out


@st.composite
def _heads(draw: st.DrawFn, heads: _Heads, times: int) -> bytes:
    """``times`` request heads alike, maybe malformed, maybe split into CONTINUATION frames,
    maybe with END_STREAM: each on a new stream, or the first one's bytes again."""
    fields = request_fields(draw(st.sampled_from([b"GET", b"POST"])), draw(st.sampled_from(PATHS)))
    if draw(st.integers(0, 5)) == 0:
        fields.append(draw(st.sampled_from(MALFORMED)))
    end = END_STREAM if draw(st.booleans()) else 0
    pieces = draw(st.sampled_from([1, 1, 1, 2, 17, 18]))
    first = _head_frames(heads.new_stream(), heads.block(fields), end, pieces)
    if times == 1 or not draw(st.booleans()):
        return first * times
    again = heads.block(fields)  # every field is in the table now: the same bytes each time
    return first + b"".join(
        _head_frames(heads.new_stream(), again, end, pieces) for _ in range(times - 1)
    )


@st.composite
def _data(draw: st.DrawFn) -> bytes:
    size = draw(st.sampled_from([0, 1, 10, 1000, 16384]))
    flags = END_STREAM if draw(st.integers(0, 3)) == 0 else 0
    payload = b"d" * size
    if draw(st.integers(0, 5)) == 0:
        flags |= PADDED
        pad = draw(st.integers(0, 255))
        payload = bytes([pad]) + payload[: max(0, size - pad - 1)] + bytes(pad)
    return frame(DATA, flags, draw(STREAM_IDS), payload)


_SETTINGS = st.dictionaries(
    st.integers(1, 9),
    st.sampled_from([0, 1, 100, 16384, 65535, 2**24, 2**31 - 1, 2**31, 2**32 - 1]),
    max_size=3,
)

_CONTROL = st.one_of(
    st.builds(priority, STREAM_IDS, STREAM_IDS),
    st.builds(rst_stream, STREAM_IDS, st.sampled_from([0, 1, 5, 8, 0xFF])),
    st.builds(settings_frame, _SETTINGS),
    st.just(settings_frame(ack=True)),
    st.builds(ping, st.binary(min_size=8, max_size=8)),
    st.builds(lambda data: ping(data, ack=True), st.binary(min_size=8, max_size=8)),
    st.builds(window_update, STREAM_IDS, st.sampled_from([0, 1, 65535, 2**31 - 1])),
    st.builds(
        lambda code: frame(GOAWAY, 0, 0, (0).to_bytes(4, "big") + code),
        st.binary(min_size=4, max_size=4),
    ),
    st.builds(lambda sid: frame(PUSH_PROMISE, END_HEADERS, sid, bytes(4)), STREAM_IDS),
    st.builds(lambda sid: frame(CONTINUATION, END_HEADERS, sid, b"\x82"), STREAM_IDS),
    st.builds(lambda kind: frame(kind, 0, 0, b"ext"), st.integers(10, 255)),
    st.builds(  # a frame header announcing more than SETTINGS_MAX_FRAME_SIZE
        lambda size, sid: size.to_bytes(3, "big") + bytes([DATA, 0]) + sid.to_bytes(4, "big"),
        st.sampled_from([16385, 2**24 - 1]),
        STREAM_IDS,
    ),
    st.binary(min_size=1, max_size=12),
)

#: how many times a piece is repeated: mostly once, sometimes a few, sometimes a flood
_TIMES = st.one_of(st.just(1), st.just(1), st.integers(2, 10), st.integers(500, 8000))


@st.composite
def frame_streams(draw: st.DrawFn, max_reads: int = 8) -> FrameStream:
    """The preface and SETTINGS, then up to 12 pieces (at most ``max_reads`` full reads in
    all), sometimes with one byte flipped, cut into reads of 64 KiB (the last one shorter)."""
    heads = _Heads()
    data = bytearray(PREFACE + settings_frame())
    limit = max_reads * READ
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["head", "head", "trailers", "data", "control"]))
        room = limit - len(data)
        times = min(draw(_TIMES), room // 9 + 1)  # no frame is shorter than 9 bytes
        if kind == "head":
            chunk = draw(_heads(heads, times))
        else:
            if kind == "trailers":
                sid = draw(STREAM_IDS)
                one = frame(HEADERS, END_HEADERS | END_STREAM, sid, heads.block([(b"x-t", b"1")]))
            else:
                one = draw(_data() if kind == "data" else _CONTROL)
            chunk = one * min(times, room // len(one) + 1)
        data += chunk[:room]
        if len(data) >= limit:
            break
    if draw(st.integers(0, 9)) == 0 and len(data) > len(PREFACE):  # one byte flipped
        at = draw(st.integers(len(PREFACE), len(data) - 1))
        data[at] ^= draw(st.integers(1, 255))
    return FrameStream([bytes(data[i : i + READ]) for i in range(0, len(data), READ)])
