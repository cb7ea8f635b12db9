"""The work one read can start: whatever frames a full 64 KiB read holds, the server hands
them to h2 at most ``http2_max_frames_per_step`` at a time, refuses what it cannot take and
judges the flood account between two slices, and lets every other connection run in
between. The loop guard (``tests/blocking.py``: no task step over 100 ms) watches a read of
each frame kind, with the default limits, beside a well-behaved client that keeps being
served."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import h2.connection
import pytest
import trio
import trio.testing

from tests.blocking import DEFAULT_BUDGET, loop_guard
from tests.http2.lab import Lab, hello, router
from tests.http2.support import (
    CONTINUATION,
    END_HEADERS,
    ENHANCE_YOUR_CALM,
    HEADERS,
    PROTOCOL_ERROR,
    REFUSED_STREAM,
    H2Client,
    RawPeer,
    connect,
    connections,
    data_frame,
    frame,
    h2_config,
    h2_server,
    ping,
    priority,
    request_fields,
    rst_stream,
    settings_frame,
    well_behaved,
    window_update,
)
from trioframe import Response, Router

READ = 64 * 1024  # what the server reads at once
LIMITS = [-1, 0, 1]
GOAWAY, PUSH_PROMISE = 7, 5


def full_read(start: bytes, frames: Iterator[bytes]) -> bytes:
    """``start``, then as many of ``frames`` as fit in one read."""
    read = bytearray(start)
    for each in frames:
        if len(read) + len(each) > READ:
            return bytes(read)
        read += each
    raise AssertionError("not enough frames for a full read")


def forever(make: Callable[[int], bytes]) -> Iterator[bytes]:
    i = 0
    while True:
        yield make(i)
        i += 1


def post(peer: RawPeer, path: bytes = b"/wait/x") -> bytes:
    return peer.headers_frame(1, request_fields(b"POST", path), end_stream=False)


def new_streams(peer: RawPeer) -> bytes:
    fields = request_fields(b"GET", b"/wait/x")
    return full_read(b"", forever(lambda i: peer.headers_frame(2 * i + 1, fields)))


def continued_streams(peer: RawPeer) -> bytes:
    # each head in a HEADERS frame and 16 CONTINUATION frames (empty ones), the most allowed
    fields = request_fields(b"GET", b"/wait/x")

    def block(i: int) -> bytes:
        head = frame(HEADERS, 0x1, 2 * i + 1, peer.block(fields))
        empty = frame(CONTINUATION, 0, 2 * i + 1) * 15
        return head + empty + frame(CONTINUATION, END_HEADERS, 2 * i + 1)

    return full_read(b"", forever(block))


def huffman_heads(peer: RawPeer) -> bytes:
    # the slowest HPACK to decode: long Huffman-coded values, one head per frame
    def head(i: int) -> bytes:
        return peer.headers_frame(
            2 * i + 1, request_fields(b"GET", b"/", [(b"x-pad", b"a" * 26160)])
        )

    return full_read(b"", forever(head))


def trailers_on_a_reset_stream(peer: RawPeer) -> bytes:
    start = post(peer) + rst_stream(1)
    return full_read(start, forever(lambda i: peer.headers_frame(1, [(b"x-t", b"%d" % i)])))


SERVED = -1  # the connection goes on: a PING after the read is answered
CLOSED = -2  # the connection closes without a GOAWAY of the server's (the client sent one)


@attrs.frozen
class Kind:
    """A full read of one frame kind and what the server makes of it."""

    build: Callable[[RawPeer], bytes]
    #: the error code of the server's GOAWAY, or SERVED, or CLOSED
    outcome: int = ENHANCE_YOUR_CALM
    #: handled in many slices (not refused whole by the frame meter, nor at its first frame)
    sliced: bool = False


def repeated(make: Callable[[int], bytes]) -> Callable[[RawPeer], bytes]:
    return lambda peer: full_read(b"", forever(make))


def after_post(path: bytes, make: Callable[[int], bytes], reset: bool = False) -> Kind:
    def build(peer: RawPeer) -> bytes:
        return full_read(post(peer, path) + (rst_stream(1) if reset else b""), forever(make))

    return Kind(build)


KINDS: dict[str, Kind] = {
    "DATA, 1 byte each": attrs.evolve(
        after_post(b"/info", lambda i: data_frame(1, b"x")), outcome=SERVED, sliced=True
    ),
    "DATA, empty": after_post(b"/wait/x", lambda i: data_frame(1, b"")),
    "DATA on a closed stream": attrs.evolve(
        after_post(b"/wait/x", lambda i: data_frame(1, b"x"), reset=True), sliced=True
    ),
    "HEADERS opening streams": Kind(new_streams, sliced=True),
    "HEADERS with Huffman-coded values": Kind(huffman_heads, SERVED),
    "HEADERS on a reset stream": Kind(trailers_on_a_reset_stream, sliced=True),
    "HEADERS and CONTINUATION": Kind(continued_streams, SERVED, sliced=True),
    "PRIORITY": Kind(repeated(lambda i: priority(2 * i + 1))),
    "RST_STREAM": after_post(b"/wait/x", lambda i: rst_stream(1)),
    "SETTINGS": Kind(repeated(lambda i: settings_frame({0x4: 65535 + i % 2}))),
    "SETTINGS ACK": Kind(repeated(lambda i: settings_frame(ack=True))),
    "PUSH_PROMISE": attrs.evolve(
        after_post(b"/wait/x", lambda i: frame(PUSH_PROMISE, END_HEADERS, 1, bytes(4))),
        outcome=PROTOCOL_ERROR,
    ),
    "PING": Kind(repeated(lambda i: ping(b"%08d" % i))),
    "GOAWAY": Kind(repeated(lambda i: frame(GOAWAY, 0, 0, bytes(8))), CLOSED),
    "WINDOW_UPDATE": Kind(repeated(lambda i: window_update(0, 1))),
    "unknown type": Kind(repeated(lambda i: frame(0xFA, 0, 0, b"x"))),
}


async def serve_beside(good: H2Client, busy: Callable[[], bool]) -> list[tuple[float, bool]]:
    """Requests on the well-behaved connection until ``busy()`` is over (one at least):
    each one's latency in CPU time, and whether it was answered while ``busy()``."""
    answers = []
    while True:
        start = time.thread_time()
        assert (await good.request(b"POST", b"/echo", b"fine")).body == b"fine"
        answers.append((time.thread_time() - start, busy()))
        if not answers[-1][1]:
            return answers


@pytest.mark.parametrize("kind", list(KINDS))
async def test_a_full_read_of_one_frame_kind_never_holds_the_loop(
    kind: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with h2_server(router(Lab()), h2_config()) as (server, nursery):
        good = await well_behaved(server, nursery)
        assert (await good.request()).status == 200
        peer = await connect(server, nursery)
        (hostile,) = [c for c in connections(server) if c.adapter.requests == 0]
        read = KINDS[kind].build(peer)
        assert READ - 100 < len(read) <= READ
        with loop_guard():
            async with trio.open_nursery() as beside:
                beside.start_soon(peer.send, read)
                answers = await serve_beside(good, lambda: hostile.adapter.backlog)
            outcome = KINDS[kind].outcome
            if outcome == SERVED:
                await peer.send(ping(b"lastping"))
                await peer.until(lambda: b"lastping" in peer.ping_acks)
            else:
                await peer.closed()
            assert [g.error_code for g in peer.goaways][-1:] == ([] if outcome < 0 else [outcome])
            assert (await good.request()).status == 200
        assert max(latency for latency, _ in answers) < DEFAULT_BUDGET, answers
        if KINDS[kind].sliced:  # served between two slices, not after the whole read
            assert any(during for _, during in answers), answers


@pytest.mark.parametrize("extra", LIMITS)
async def test_a_read_is_handled_in_slices_of_http2_max_frames_per_step(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    # One read of new streams, all but the first refused (one stream at a time), each
    # refusal overhead past an allowance of 1: the flood is judged between two slices, so
    # what h2 sees of the read ends with the first slice.
    step = 8
    lab = Lab()
    config = h2_config(
        http2_max_frames_per_step=step, max_concurrent_streams=1, http2_flood_allowance=1
    )
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        fields = request_fields(b"GET", b"/wait/x")
        count = step + extra
        await peer.send(b"".join(peer.headers_frame(2 * i + 1, fields) for i in range(count)))
        await trio.testing.wait_all_tasks_blocked()  # the whole read is handled
        await peer.send(ping())  # the next read judges the refusals of the last slice
        await peer.closed()
        handled = min(count, step)
        last = 2 * handled - 1
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
            (last, ENHANCE_YOUR_CALM)
        ]
        refused = sorted(sid for sid, r in peer.streams.items() if r.reset == REFUSED_STREAM)
        assert refused == list(range(3, last + 1, 2))
        assert list(lab.started) == ["x"]


async def test_new_streams_cost_linear_time_in_h2s_stream_table(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    # h2 counts the open streams for every new one by walking its whole stream table (and
    # dropping the closed streams from it). Walked for each of N new streams, that is N * N
    # steps for one read; the server walks it only once the table has doubled.
    count = 2000
    visited = 0
    walk = h2.connection.H2Connection._open_streams

    def counted(self: h2.connection.H2Connection, remainder: int) -> Any:
        nonlocal visited
        visited += len(self.streams)
        return walk(self, remainder)

    monkeypatch.setattr(h2.connection.H2Connection, "_open_streams", counted)
    config = h2_config(max_concurrent_streams=10 * count, max_requests_per_connection=10 * count)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        fields = request_fields(b"GET", b"/")
        await peer.send(b"".join(peer.headers_frame(2 * i + 1, fields) for i in range(count)))
        await peer.until(lambda: sum(r.ended for r in peer.streams.values()) == count)
        assert visited <= 4 * count  # N * N / 2 = 2,000,000 when walked for every stream
        (connection,) = connections(server)
        await peer.send(peer.headers_frame(2 * count + 1, fields))
        assert (await peer.response(2 * count + 1)).status == 200
        assert len(connection.adapter._h2.streams) <= 2 * count + 64  # dropped now and then


async def test_a_deadline_passing_while_a_read_is_handled_does_not_cut_it_short(
    mock_clock: trio.testing.MockClock,
) -> None:
    # The connection's deadlines are for waiting for the client. A read that came in time is
    # handled to its end, even when the keep-alive deadline passes between two of its slices
    # (here the first stream's handler moves the clock past it).
    async def jump() -> Response:
        mock_clock.jump(2)
        return Response.text("jumped")

    app = Router().get("/jump", jump).get("/", hello)
    config = h2_config(keep_alive_timeout=5, http2_max_frames_per_step=4)
    async with h2_server(app, config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/")
        assert (await peer.response(1)).status == 200
        mock_clock.jump(4)  # the connection is idle, 1 s before its keep-alive deadline
        ids = list(range(3, 21, 2))  # 9 streams: 3 slices
        read = peer.headers_frame(ids[0], request_fields(b"GET", b"/jump"))
        read += b"".join(peer.headers_frame(sid, request_fields(b"GET", b"/")) for sid in ids[1:])
        await peer.send(read)
        for sid in ids:
            assert (await peer.response(sid)).status == 200
        assert peer.goaways == []
