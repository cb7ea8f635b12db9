"""Fuzzing the WebSocket frame reader: after a real upgrade through the connection code (in
memory, over a lockstep stream pair), the client sends a sequence of frames built from the
seeds in ``corpus/websocket/`` and from generated frames (valid, fragmented, control frames,
reserved opcodes and bits, unmasked, bad lengths, invalid UTF-8, Close with odd codes), with
a few byte-level mutations, in random chunks.

The oracle is a reference reading of the same bytes written out here from RFC 6455 (``expect``,
independent of wsproto but for the close codes wsproto accepts): which messages the echo
handler must send back, and how the session must end. Checked: no exception escapes the
server task and nothing is logged as a warning or an error; every frame the server sends is
well formed; the echoes are the messages, unchanged; the session
ends with the right Close (1002, 1007 or 1009 for a failure, the client's own Close echoed),
or, left in the middle of a frame, is dropped by the keep-alive without one, or, left between
messages, still echoes a probe and closes with 1000; and the session's peak memory stays
within a fixed bound however many frames were sent (``tracemalloc``)."""

from __future__ import annotations

import codecs
import itertools
import logging
import struct
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import attrs
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trioframe import Router, Server, ServerConfig

from ..websocket._raw_client import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    PONG,
    TEXT,
    Frame,
    WsClient,
    echo,
)
from ._settings import fuzz_settings

CORPUS = Path(__file__).parent / "corpus" / "websocket"
LIMIT = 256  # websocket_max_message_size: small, so that 1009 is within reach
CONFIG = ServerConfig(websocket_max_message_size=LIMIT)
#: Close codes a peer may send (RFC 6455 section 7.4; wsproto also takes 1012 and 1013).
VALID_CLOSE_CODES = frozenset({*range(1000, 1004), *range(1007, 1014), *range(3000, 5000)})
PROBE = "probe ✓"
#: Peak traced memory allowed for one session, whatever was sent: the session's tasks and
#: their teardown (~30 KiB), the receive queue full of messages near the limit, a read.
MEMORY_BOUND = 64 * 1024


# -- seeds ---------------------------------------------------------------------------------------
def _read_seed(path: Path) -> list[bytes]:
    """One frame per line, in hex; ``#`` starts a comment."""
    frames = []
    for line in path.read_text().splitlines():
        text = line.split("#", 1)[0].replace(" ", "")
        if text:
            frames.append(bytes.fromhex(text))
    return frames


SEEDS = {path.name: _read_seed(path) for path in sorted(CORPUS.glob("*.hex"))}
SEED_FRAMES = sorted({frame for frames in SEEDS.values() for frame in frames})


# -- building frames -----------------------------------------------------------------------------
def encode_frame(
    opcode: int,
    payload: bytes,
    *,
    fin: bool = True,
    rsv: int = 0,
    key: bytes | None = b"\0\0\0\0",
    length_bytes: int = 0,
    declared: int | None = None,
) -> bytes:
    """A client frame. ``key=None`` leaves it unmasked; ``length_bytes`` 2 or 8 forces that
    extended length (0: the shortest); ``declared`` states a length other than the payload's."""
    size = len(payload) if declared is None else declared
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    mask_bit = 0 if key is None else 0x80
    if length_bytes == 0:
        length_bytes = 0 if size < 126 else 2 if size < 1 << 16 else 8
    if length_bytes == 0:
        head += bytes([mask_bit | size])
    else:
        marker = 126 if length_bytes == 2 else 127
        head += bytes([mask_bit | marker]) + (size % (1 << 8 * length_bytes)).to_bytes(
            length_bytes, "big"
        )
    if key is None:
        return head + payload
    return head + key + bytes(byte ^ key[index % 4] for index, byte in enumerate(payload))


CLOSE_CODES = [0, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1011, 1012, 1014, 1015]
CLOSE_CODES += [1016, 2999, 3000, 4000, 4999, 5000, 65535]
payloads = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20).map(str.encode),
    st.builds(  # about the size limit, in 1- to 3-byte characters (cut anywhere)
        lambda size, unit: (unit * size)[:size],
        st.integers(LIMIT - 8, LIMIT + 8),
        st.sampled_from([b"x", "é".encode(), "€".encode(), b"\xff"]),
    ),
    st.builds(
        lambda code, reason: struct.pack("!H", code) + reason,
        st.sampled_from(CLOSE_CODES),
        st.one_of(st.text(max_size=10).map(str.encode), st.binary(max_size=4)),
    ),
)


@st.composite
def generated_frames(draw: st.DrawFn) -> bytes:
    """Mostly valid frames, each field sometimes wrong."""
    opcode = draw(st.sampled_from([TEXT, BINARY, CONTINUATION, PING, PONG, CLOSE, 0x3, 0xB]))
    payload = draw(payloads)
    if opcode >= 0x8 and draw(st.integers(0, 9)) > 0:
        payload = payload[:125]  # control frames mostly within their limit
    return encode_frame(
        opcode,
        payload,
        fin=opcode >= 0x8 or draw(st.booleans()),
        rsv=draw(st.sampled_from([0, 0, 0, 0, 0, 1, 2, 4])),
        key=None if draw(st.integers(0, 19)) == 0 else draw(st.binary(min_size=4, max_size=4)),
        length_bytes=draw(st.sampled_from([0, 0, 0, 0, 0, 2, 8])),
        declared=draw(
            st.one_of(st.none(), st.none(), st.none(), st.integers(0, 300), st.just((1 << 63) + 1))
        ),
    )


@st.composite
def fragmented_messages(draw: st.DrawFn) -> bytes:
    """A valid data message in fragments: pieces of its payload (sometimes one byte each),
    sometimes a run of empty continuation frames (up to a flood) and a ping among them."""
    opcode = draw(st.sampled_from([TEXT, BINARY]))
    payload = draw(payloads)
    if draw(st.booleans()):
        cuts = sorted(draw(st.lists(st.integers(0, len(payload)), max_size=8)))
    else:
        cuts = list(range(1, len(payload)))
    pieces = [
        payload[start:end] for start, end in zip([0, *cuts], [*cuts, len(payload)], strict=True)
    ]
    empty = draw(st.one_of(*[st.just(0)] * 4, st.integers(1, 5), st.integers(300, 1500)))
    middle = len(pieces) // 2 + 1
    pieces[middle:middle] = [b""] * empty
    key = draw(st.binary(min_size=4, max_size=4))
    last = len(pieces) - 1
    frames = [
        encode_frame(opcode if index == 0 else CONTINUATION, piece, fin=index == last, key=key)
        for index, piece in enumerate(pieces)
    ]
    if draw(st.booleans()):
        frames.insert(draw(st.integers(1, len(frames))), encode_frame(PING, b"ping", key=key))
    return b"".join(frames)


@st.composite
def sequences(draw: st.DrawFn) -> bytes:
    """A seed, then seed frames and generated frames (a frame sometimes repeated, up to 8 KiB)
    and fragmented messages, then a few byte mutations."""
    frame = st.one_of(st.sampled_from(SEED_FRAMES), generated_frames())
    repeat = st.one_of(*[st.just(1)] * 6, st.integers(2, 40), st.integers(300, 1500))
    run = st.builds(
        lambda frame, times: frame * max(1, min(times, 8192 // len(frame))), frame, repeat
    )
    pieces = draw(st.lists(st.one_of(run, fragmented_messages()), max_size=8))
    start = draw(st.one_of(st.just(b""), st.sampled_from(list(SEEDS.values())).map(b"".join)))
    data = bytearray(start + b"".join(pieces))
    for kind, where, value in draw(
        st.lists(
            st.tuples(
                st.sampled_from(["flip", "insert", "delete", "truncate"]),
                st.floats(0, 1),
                st.binary(min_size=1, max_size=4),
            ),
            max_size=3,
        )
    ):
        at = int(where * len(data))
        if kind == "flip" and at < len(data):
            data[at] ^= value[0] or 1
        elif kind == "insert":
            data[at:at] = value
        elif kind == "delete":
            del data[at : at + value[0] % 8 + 1]
        elif kind == "truncate":
            del data[at:]
    return bytes(data)


# -- the reference reading -----------------------------------------------------------------------
@attrs.define
class Expected:
    """What the server must do with a client's bytes."""

    messages: list[tuple[int, bytes]] = attrs.Factory(list)  # echoes, in order
    pings: set[bytes] = attrs.Factory(set)  # a pong may answer any of these
    failure: frozenset[int] = frozenset()  # the server fails with one of these codes
    client_close: bytes | None = None  # the client's Close payload, which the server echoes
    idle: bool = False  # the bytes end between messages: the session must still work


def expect(data: bytes) -> Expected:
    """Read ``data`` as the server must (RFC 6455 sections 5 and 7, ``LIMIT`` bytes per
    message), up to the first frame that ends the session or the end of the bytes."""
    out = Expected()
    at = 0
    kind: int | None = None  # TEXT or BINARY while a message is in progress
    message = bytearray()
    decoder = codecs.getincrementaldecoder("utf-8")()
    while True:
        if len(data) - at < 2:
            out.idle = at == len(data) and kind is None
            return out
        fin, rsv, opcode = bool(data[at] & 0x80), data[at] & 0x70, data[at] & 0x0F
        masked, size = data[at + 1] & 0x80, data[at + 1] & 0x7F
        at += 2
        control = opcode >= 0x8
        if opcode not in (CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG):
            return attrs.evolve(out, failure=frozenset({1002}))
        if (control and not fin) or (control and size > 125):
            return attrs.evolve(out, failure=frozenset({1002}))
        if size >= 126:
            width = 2 if size == 126 else 8
            if len(data) - at < width:
                return out  # waiting for the rest of the header
            size = int.from_bytes(data[at : at + width], "big")
            at += width
            if size < (126 if width == 2 else 1 << 16) or size >> 63:
                return attrs.evolve(out, failure=frozenset({1002}))  # not minimal, or MSB set
        if rsv or not masked:
            return attrs.evolve(out, failure=frozenset({1002}))
        if len(data) - at < 4:
            return out
        key = data[at : at + 4]
        available = min(size, len(data) - at - 4)
        payload = bytes(
            byte ^ key[i % 4] for i, byte in enumerate(data[at + 4 : at + 4 + available])
        )
        at += 4 + available
        complete = available == size
        if control:
            if not complete:
                return out
            if opcode == PING:
                out.pings.add(payload)
            elif opcode == CLOSE:
                if len(payload) == 1:
                    return attrs.evolve(out, failure=frozenset({1002}))
                if payload and int.from_bytes(payload[:2], "big") not in VALID_CLOSE_CODES:
                    return attrs.evolve(out, failure=frozenset({1002}))
                try:
                    payload[2:].decode()
                except UnicodeDecodeError:
                    return attrs.evolve(out, failure=frozenset({1007}))
                return attrs.evolve(out, client_close=payload)
            continue
        if size and not available:
            return out  # a data frame is read once some of its payload is there
        if (kind is None and opcode == CONTINUATION) or (kind and opcode != CONTINUATION):
            return attrs.evolve(out, failure=frozenset({1002}))  # a stray or missing continuation
        if opcode != CONTINUATION:
            kind, message = opcode, bytearray()
            decoder = codecs.getincrementaldecoder("utf-8")()
        over = False  # the message passed the limit at a byte already taken
        last = fin and complete
        for index in range(len(payload)):
            byte = payload[index : index + 1]
            if kind == TEXT:
                try:
                    byte = decoder.decode(byte, last and index == size - 1).encode()
                except UnicodeDecodeError:  # 1009 too if a read ended past the limit
                    return attrs.evolve(out, failure=frozenset({1007, 1009} if over else {1007}))
            message += byte
            over = over or len(message) > LIMIT
        if kind == TEXT and last and not payload:
            try:
                decoder.decode(b"", True)
            except UnicodeDecodeError:
                return attrs.evolve(out, failure=frozenset({1007}))
        if over:
            return attrs.evolve(out, failure=frozenset({1009}))
        if last:
            assert kind is not None
            out.messages.append((kind, bytes(message)))
            kind = None


# -- running a session ---------------------------------------------------------------------------
@attrs.define
class Seen:
    """What the server sent, checked as it arrives (nothing is kept but counts)."""

    wanted: list[tuple[int, bytes]]  # the echoes due, in order
    pings: set[bytes]
    echoes: int = 0
    close: bytes | None = None
    #: Set once every echo due has arrived, or the stream has ended.
    echoed: trio.Event = attrs.Factory(trio.Event)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def errors_logged() -> Iterator[list[logging.LogRecord]]:
    """The warnings and errors trioframe logs meanwhile."""
    handler = _Collect()
    logger = logging.getLogger("trioframe")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


async def read_until_eof(client: WsClient, seen: Seen) -> None:
    """Check every frame the server sends: unmasked, RSV2/3 clear (``read_frame``), whole,
    echoes in order, pongs for pings that were sent, nothing after the Close."""
    while (frame := await client.read_frame_or_eof()) is not None:
        assert seen.close is None, f"{frame} after the Close"
        assert frame.fin and not frame.rsv1, frame
        if frame.opcode in (TEXT, BINARY):
            assert seen.echoes < len(seen.wanted), f"unexpected {frame}"
            assert (frame.opcode, frame.payload) == seen.wanted[seen.echoes]
            seen.echoes += 1
            if seen.echoes == len(seen.wanted):
                seen.echoed.set()
        elif frame.opcode == PONG:
            assert frame.payload in seen.pings, frame
        elif frame.opcode == CLOSE:
            seen.close = frame.payload
        else:
            assert frame == Frame(True, False, PING, b"trioframe"), frame  # the keep-alive
    seen.echoed.set()


async def run_session(data: bytes, chunk_sizes: list[int], expected: Expected) -> Seen:
    wanted = list(expected.messages)
    if expected.idle:
        wanted.append((TEXT, PROBE.encode()))
    writes, start = [], 0
    shortest = len(data) // 200  # at most about 200 writes: each one is a round trip
    for size in itertools.cycle(chunk_sizes):
        if start >= len(data):
            break
        writes.append(data[start : start + max(size, shortest)])
        start += max(size, shortest)
    seen = Seen(wanted, expected.pings)
    server = Server(Router().websocket("/echo", echo), ("127.0.0.1", 0), CONFIG)
    with trio.fail_after(3600):  # virtual time: a session that hangs fails quickly
        async with trio.open_nursery() as nursery:
            client_end, server_end = trio.testing.lockstep_stream_pair()
            nursery.start_soon(server.handle_stream, server_end, ("127.0.0.1", 9))
            client = WsClient(client_end)
            await client.upgrade("testserver", "/echo")
            await client.assert_echoes("warm-up")  # the session is set up before tracing
            tracemalloc.start()
            try:
                async with trio.open_nursery() as inner:
                    inner.start_soon(read_until_eof, client, seen)
                    with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                        for write in writes:  # the server may stop reading: then this fails
                            await client.send(write)
                        if expected.idle:
                            await client.send(encode_frame(TEXT, PROBE.encode(), key=b"k3y!"))
                            await seen.echoed.wait()
                            await client.send(encode_frame(CLOSE, struct.pack("!H", 1000)))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < MEMORY_BOUND, f"peak memory {peak} bytes"
            nursery.cancel_scope.cancel()
    return seen


@fuzz_settings(150)
@given(data=sequences(), chunk_sizes=st.lists(st.integers(1, 300), min_size=1, max_size=6))
def test_websocket_frame_reader(data: bytes, chunk_sizes: list[int]) -> None:
    expected = expect(data)
    clock = trio.testing.MockClock(autojump_threshold=0)
    with errors_logged() as errors:
        seen = trio.run(run_session, data, chunk_sizes, expected, clock=clock)
    assert not errors, [record.getMessage() for record in errors]
    if expected.failure:
        assert seen.close is not None, "no Close for a failed connection"
        assert int.from_bytes(seen.close[:2], "big") in expected.failure, seen.close
        assert seen.echoes == len(expected.messages)
    elif expected.client_close is not None:
        assert seen.close == expected.client_close  # echoes sent before it may be cut short
    elif expected.idle:
        assert seen.echoes == len(expected.messages) + 1  # and the probe
        assert seen.close == struct.pack("!H", 1000)
    else:  # stopped inside a frame or a message: dropped by the keep-alive, without a Close
        assert seen.close is None
        assert seen.echoes == len(expected.messages)
