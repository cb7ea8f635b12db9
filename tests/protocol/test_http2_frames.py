"""The HTTP/2 frame meter: which frames count as overhead or work, the flood rule at N-1, N
and N+1, header blocks bounded in frames and bytes, and frame headers split across reads."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._protocol.http2_frames import (
    CONTINUATION,
    DATA,
    HEADERS,
    PING,
    PRIORITY,
    RST_STREAM,
    SETTINGS,
    WINDOW_UPDATE,
    Flood,
    FrameMeter,
    FrameTooLarge,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
END_STREAM = ACK = 0x1
END_HEADERS = 0x4


def frame(kind: int, flags: int = 0, payload: bytes = b"", stream_id: int = 1) -> bytes:
    return (
        len(payload).to_bytes(3, "big")
        + bytes([kind, flags])
        + stream_id.to_bytes(4, "big")
        + payload
    )


def meter(
    allowance: int = 10,
    continuations: int = 3,
    block: int = 100,
    frame_size: int = 16384,
    slice_frames: int = 100,
) -> FrameMeter:
    m = FrameMeter(
        allowance=allowance,
        max_continuation_frames=continuations,
        max_block_size=block,
        max_frame_size=frame_size,
        slice_frames=slice_frames,
    )
    m.scan(PREFACE + frame(SETTINGS, stream_id=0) + frame(SETTINGS, ACK, stream_id=0))
    return m


@pytest.mark.parametrize(
    "overhead",
    [
        frame(PING, payload=bytes(8), stream_id=0),
        frame(PING, ACK, payload=bytes(8), stream_id=0),
        frame(SETTINGS, stream_id=0),
        frame(SETTINGS, ACK, stream_id=0),
        frame(WINDOW_UPDATE, payload=(1).to_bytes(4, "big")),
        frame(PRIORITY, payload=bytes(5)),
        frame(RST_STREAM, payload=bytes(4)),
        frame(DATA),  # empty, not ending the stream
        frame(0xFA, payload=b"xyz"),  # an unknown type
    ],
)
def test_frames_that_do_no_work_are_overhead(overhead: bytes) -> None:
    m = meter()
    m.scan(overhead)
    assert (m.overhead, m.work) == (1, 0)


def test_the_first_settings_and_its_ack_are_free_and_body_is_not_work_yet() -> None:
    m = meter()
    assert (m.overhead, m.work) == (0, 0)
    m.scan(frame(DATA, payload=b"abc") + frame(DATA, END_STREAM) + frame(HEADERS, END_HEADERS))
    # the empty DATA ending a stream is no overhead; body earns credit only when a handler
    # reads it (the adapter credits it then), so one byte of DATA cannot pay for a reset
    assert (m.overhead, m.work) == (0, 0)


def test_the_flood_rule_at_n_minus_1_n_and_n_plus_1() -> None:
    ping = frame(PING, payload=bytes(8), stream_id=0)
    m = meter(allowance=10)
    m.scan(ping * 9)
    m.scan(ping)  # 10 = the allowance: still fine
    with pytest.raises(Flood):
        m.scan(ping)  # 11


def test_work_buys_twice_its_weight_in_overhead() -> None:
    ping = frame(PING, payload=bytes(8), stream_id=0)
    m = meter(allowance=10)
    m.credit()
    m.credit()
    m.scan(ping * 14)  # 10 + 2 * 2
    with pytest.raises(Flood):
        m.scan(ping)


def test_server_resets_are_judged_at_the_next_check() -> None:
    m = meter(allowance=2)
    for _ in range(3):
        m.charge()
    with pytest.raises(Flood):
        m.check()


def test_frame_headers_split_across_reads_are_read_whole() -> None:
    data = frame(PING, payload=bytes(8), stream_id=0) * 3
    m = meter()
    for byte in data:
        m.scan(bytes([byte]))
    assert m.overhead == 3


def test_payloads_are_skipped_not_parsed() -> None:
    m = meter()
    payload = frame(PING, payload=bytes(8), stream_id=0) * 5  # looks like frames, is data
    m.scan(frame(DATA, payload=payload))
    assert (m.overhead, m.work) == (0, 0)


def test_continuation_frames_at_n_minus_1_n_and_n_plus_1() -> None:
    for count in (2, 3):
        m = meter(continuations=3)
        m.scan(frame(HEADERS, payload=b"a"))
        m.scan(frame(CONTINUATION, payload=b"b") * (count - 1))
        m.scan(frame(CONTINUATION, END_HEADERS, payload=b"c"))
        assert not m.in_header_block
    m = meter(continuations=3)
    m.scan(frame(HEADERS, payload=b"a") + frame(CONTINUATION, payload=b"b") * 3)
    assert m.in_header_block
    with pytest.raises(Flood, match="more than 3 frames"):
        m.scan(frame(CONTINUATION, END_HEADERS, payload=b"c"))


def test_header_block_size_at_n_minus_1_n_and_n_plus_1() -> None:
    for size in (99, 100):
        m = meter(block=100)
        m.scan(
            frame(HEADERS, payload=bytes(50))
            + frame(CONTINUATION, END_HEADERS, payload=bytes(size - 50))
        )
    m = meter(block=100)
    with pytest.raises(Flood, match="larger than 100 bytes"):
        m.scan(
            frame(HEADERS, payload=bytes(50)) + frame(CONTINUATION, END_HEADERS, payload=bytes(51))
        )


@pytest.mark.parametrize("kind", [DATA, HEADERS, PING, CONTINUATION, 0xFA])
def test_frame_size_at_n_minus_1_n_and_n_plus_1(kind: int) -> None:
    for size in (99, 100):
        m = meter(frame_size=100, block=1000)
        m.scan(frame(kind, END_HEADERS, payload=bytes(size)))
    m = meter(frame_size=100)
    with pytest.raises(FrameTooLarge, match="of 101 bytes, above 100"):
        m.scan(frame(kind, END_HEADERS, payload=bytes(101))[:9])  # the header alone


def test_a_frame_too_large_is_refused_from_a_header_split_across_reads() -> None:
    m = meter()
    header = (2**24 - 1).to_bytes(3, "big") + bytes([DATA, 0]) + (1).to_bytes(4, "big")
    m.scan(header[:5])
    with pytest.raises(FrameTooLarge, match=f"of {2**24 - 1} bytes, above 16384"):
        m.scan(header[5:])


def slices(m: FrameMeter, data: bytes) -> list[int]:
    """Where ``scan`` ends each slice of ``data``, slice after slice."""
    ends = [m.scan(data)]
    while ends[-1] < len(data):
        ends.append(m.scan(data, ends[-1]))
    return ends


def test_a_read_is_scanned_in_slices_of_at_most_n_frames_ending_at_frame_starts() -> None:
    ping = frame(PING, payload=bytes(8), stream_id=0)  # 17 bytes
    data = frame(DATA, payload=b"abc")  # 12 bytes
    m = meter(slice_frames=3, allowance=100)
    assert slices(m, ping * 2) == [2 * 17]  # N-1
    assert slices(m, ping * 3) == [3 * 17]  # N
    assert slices(m, ping * 4) == [3 * 17, 4 * 17]  # N+1
    assert slices(m, data * 7) == [3 * 12, 6 * 12, 7 * 12]
    assert m.overhead == 9


def test_slices_start_afresh_with_each_read_and_never_cut_a_split_frame() -> None:
    data = frame(DATA, payload=b"abc")  # 12 bytes
    m = meter(slice_frames=2)
    assert slices(m, data * 2 + data[:5]) == [24, 29]  # the third frame's header starts a slice
    assert slices(m, data[5:] + data * 2) == [7 + 12, 7 + 24]  # its rest, one frame, a cut
    assert slices(m, data[:4]) == [4]
    assert slices(m, data[4:]) == [8]


def test_a_flood_stops_the_scan_where_it_is_found() -> None:
    ping = frame(PING, payload=bytes(8), stream_id=0)
    m = meter(slice_frames=4, allowance=5)
    assert m.scan(ping * 10) == 4 * 17
    with pytest.raises(Flood):
        m.scan(ping * 10, 4 * 17)  # the sixth PING
    assert m.overhead == 6


_FRAMES = st.lists(
    st.tuples(
        st.sampled_from([DATA, HEADERS, CONTINUATION, SETTINGS, PING, RST_STREAM, 0xFA]),
        st.sampled_from([0, END_STREAM, END_HEADERS, END_STREAM | END_HEADERS, ACK]),
        st.binary(max_size=40),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(_FRAMES, st.lists(st.integers(1, 400), max_size=10), st.integers(1, 8))
def test_how_the_reads_are_cut_changes_nothing(
    frames: list[tuple[int, int, bytes]], cuts: list[int], slice_frames: int
) -> None:
    # The same frames read a byte at a time (every frame header split, every payload
    # skipped in pieces) and in reads cut anywhere (whole headers and payloads read at once):
    # the same overhead, work, errors and header-block state, and every slice ends where a
    # frame starts (or at the end of a read).
    data = b"".join(frame(kind, flags, payload) for kind, flags, payload in frames)
    starts = set(itertools.accumulate((len(frame(k, f, p)) for k, f, p in frames), initial=0))

    def read(pieces: list[bytes]) -> tuple[object, ...]:
        m = meter(allowance=5, continuations=2, block=60, slice_frames=slice_frames)
        offset = 0
        try:
            for piece in pieces:
                position = 0
                while position < len(piece):
                    position = m.scan(piece, position)
                    assert offset + position in starts or position == len(piece)
                offset += len(piece)
        except (Flood, FrameTooLarge) as exc:
            return (type(exc), str(exc), m.overhead)
        return (m.overhead, m.work, m.in_header_block)

    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    cut = [data[start:end] for start, end in itertools.pairwise(points)]
    assert read(cut) == read([data[i : i + 1] for i in range(len(data))])


@pytest.mark.parametrize("kind", [DATA, HEADERS])
def test_a_frame_scan_passes_over_counts_nothing(kind: int) -> None:
    # scan does not hand a DATA frame with a payload, or a HEADERS frame with END_HEADERS,
    # to the frame rules: they leave the account as it is.
    for flags in range(256):
        if (kind == DATA) or flags & END_HEADERS:
            m = meter()
            before = (m.overhead, m.in_header_block, vars(m).copy())
            m._frame(kind, flags, 1)
            assert (m.overhead, m.in_header_block, vars(m)) == before
