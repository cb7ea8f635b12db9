"""Fuzzing the HTTP/2 connection with whole reads of mixed frames.

What runs
    Each example is one trio run under ``MockClock(autojump_threshold=0)``: a server with
    small HTTP/2 limits (``CONFIG``) serving the lab app of ``tests/http2`` over in-memory
    connections. A well-behaved client (h2's own client state machine) holds one connection;
    on another, a drawn frame stream (``http2_inputs.frame_streams``: frames of every kind,
    valid or not, often repeated by the thousand) goes out as whole 64 KiB reads, while the
    client side reads what the server answers, checks that it is made of well-formed frames,
    and drops it.

The oracle
    (a) No task step holds the event loop longer than 100 ms (``tests/blocking.py``).
    (b) The memory traced while the frames are served stays under ``MEMORY_BOUND``, which the
        settings imply (a read and its slices, one frame, a header block, the request
        bodies the windows allow, the output bound, the streams in progress), whatever was
        sent.
    (c) The well-behaved connection is served between two reads and after the last one.
    (d) No exception escapes, nothing is logged as a warning or an error, and every frame
        the server sends on the fuzzed connection is well formed (a GOAWAY with an error
        code, if any, is the last thing it sends).

Running it
    ``pytest tests/fuzz`` runs it briefly (``EXAMPLES`` examples at scale 1);
    ``nox -s fuzz`` runs it ``TRIOFRAME_FUZZ_SCALE`` times longer.
"""

from __future__ import annotations

import logging
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from functools import partial

import attrs
import trio
import trio.testing
from hypothesis import example, given

from tests.blocking import loop_guard
from tests.fuzz._settings import fuzz_settings
from tests.fuzz.http2_inputs import READ, FrameStream, frame_streams
from tests.http2.lab import Lab, router
from tests.http2.support import (
    DATA,
    PREFACE,
    H2Client,
    RawPeer,
    h2_config,
    memory_stream,
    request_fields,
    settings_frame,
)
from trioframe import Server

EXAMPLES = 25
CONFIG = h2_config(
    max_concurrent_streams=8,
    max_requests_per_connection=200,
    http2_flood_allowance=100,
    http2_max_header_list_size=4096,
    http2_stream_window=65535,
    http2_connection_window=2 * 65535,
    http2_max_output_buffer=16 * 1024,
    keep_alive_timeout=3600.0,  # the well-behaved connection waits between its requests
)
#: Peak traced memory while one frame stream is served: what the settings let the fuzzed
#: connection hold (a read, its slice in h2's buffer with at most one frame more, a header
#: block, the bodies its windows allow, the output bound, 8 streams and their answers) came
#: to 360-540 KiB at the most in long runs, with the reads in flight in the memory streams
#: and the test's own side; twice that leaves room for the garbage collector's timing.
MEMORY_BOUND = 1024 * 1024
GOAWAY = 7


@attrs.define
class Seen:
    """What the server sent on the fuzzed connection, checked as it arrives."""

    frames: int = 0
    goaway: int | None = None  # its error code, once one came


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


async def read_frames(stream: trio.abc.Stream, seen: Seen) -> None:
    """Read the server's frames until EOF, keeping nothing but counts: each frame whole,
    within the frame size, nothing after a GOAWAY with an error code."""
    buffer = bytearray()
    while True:
        try:
            data = await stream.receive_some(65536)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            assert len(buffer) == 0, f"a frame cut short: {bytes(buffer[:9]).hex()}"
            return
        buffer += data
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[:3], "big")
            assert length <= 16384, f"a frame of {length} bytes"
            if len(buffer) < 9 + length:
                break
            assert not seen.goaway or buffer[3] == GOAWAY, "a frame after an error GOAWAY"
            if buffer[3] == GOAWAY:
                seen.goaway = int.from_bytes(buffer[13:17], "big")
            seen.frames += 1
            del buffer[: 9 + length]


async def served(good: H2Client) -> None:
    assert (await good.request(b"POST", b"/echo", b"still here")).body == b"still here"


async def session(stream: FrameStream, *, traced: bool) -> tuple[Seen, int]:
    """Serve ``stream`` beside a well-behaved connection, under the loop guard, or with
    memory traced (``traced``: tracemalloc slows every step several times, so it cannot
    share a run with the guard); what the server sent on the fuzzed connection and the peak
    memory traced while it was served (0 when not ``traced``)."""
    server = Server(router(Lab()), ("127.0.0.1", 0), CONFIG)
    seen = Seen()
    with trio.fail_after(3600):  # virtual time: a session that hangs fails quickly
        async with trio.open_nursery() as nursery:
            good = H2Client(memory_stream(server, nursery))
            await good.start()
            await served(good)  # the connection is set up before tracing
            fuzzed = memory_stream(server, nursery)
            if traced:
                tracemalloc.start()
            try:
                with nullcontext() if traced else loop_guard():
                    async with trio.open_nursery() as inner:
                        inner.start_soon(read_frames, fuzzed, seen)
                        for read in stream.reads:
                            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                                await fuzzed.send_all(read)
                            await served(good)
                        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                            await fuzzed.send_eof()  # the server ends the connection once
                            # it has handled every read (streams left waiting end with it)
                    await served(good)
                peak = tracemalloc.get_traced_memory()[1] if traced else 0
            finally:
                tracemalloc.stop()
            nursery.cancel_scope.cancel()
    return seen, peak


def _reproducers() -> list[FrameStream]:
    """Streams that found problems, kept as examples: one read of minimal new streams (h2
    took 2 s over it, quadratic in the streams); a frame header announcing 16 MiB, then its
    payload (h2 buffered it whole before checking the frame's size); the preface, SETTINGS
    and a GOAWAY in one read (the server closed without sending its own SETTINGS)."""
    peer = RawPeer(trio.testing.memory_stream_pair()[0])
    start = PREFACE + settings_frame()
    heads = bytearray(start)
    stream_id = 1
    while len(heads) < READ - 16:
        heads += peer.headers_frame(stream_id, request_fields(b"GET", b"/wait/w"))
        stream_id += 2
    oversized = start + (2**24 - 1).to_bytes(3, "big") + bytes([DATA, 0, 0, 0, 0, 1])
    payload = oversized + b"x" * (24 * READ - len(oversized))  # 1.5 MiB
    goaway_at_once = start + (8).to_bytes(3, "big") + bytes([7, 0, 0, 0, 0, 0]) + bytes(8)
    return [
        FrameStream([bytes(heads)]),
        FrameStream([payload[i : i + READ] for i in range(0, len(payload), READ)]),
        FrameStream([goaway_at_once]),
    ]


REPRODUCERS = _reproducers()


@fuzz_settings(EXAMPLES)
@given(stream=frame_streams())
@example(stream=REPRODUCERS[0])
@example(stream=REPRODUCERS[1])
@example(stream=REPRODUCERS[2])
def test_http2_frame_streams(stream: FrameStream) -> None:
    for traced in (False, True):
        clock = trio.testing.MockClock(autojump_threshold=0)
        with errors_logged() as errors:
            seen, peak = trio.run(partial(session, stream, traced=traced), clock=clock)
        assert not errors, [record.getMessage() for record in errors]
        assert peak < MEMORY_BOUND, f"peak memory {peak} bytes"
        assert seen.frames > 0  # at least the server's SETTINGS
