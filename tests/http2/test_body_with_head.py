"""A request whose whole body arrives in one DATA frame right after its head, in the same
read: ``HTTP2Adapter.receive`` hands it over as one ``RequestStarted`` carrying the body, and
the connection serves it as if the body had come on its own (windows, refusals, answers)."""

from __future__ import annotations

import hpack
import pytest

from tests.http2.lab import Lab, router
from tests.http2.support import (
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADERS,
    PREFACE,
    REFUSED_STREAM,
    connect,
    data_frame,
    frame,
    h2_config,
    h2_server,
    request_fields,
    settings_frame,
)
from trioframe._protocol.http2 import HTTP2Adapter, HTTP2Limits
from trioframe._protocol.http2_events import BodyEnded, BodyReceived, Event, RequestStarted

PADDED = 0x8


class Client:
    """The bytes of a client's frames, for an adapter fed directly."""

    def __init__(self) -> None:
        self.encoder = hpack.Encoder()

    def head(self, stream_id: int, *, end: bool = False) -> bytes:
        block = self.encoder.encode(request_fields(b"POST", b"/echo"))
        return frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), stream_id, block)


def adapter(**limits: int) -> HTTP2Adapter:
    server = HTTP2Adapter(HTTP2Limits(**limits))
    server.feed(PREFACE + settings_frame())
    server.receive()
    return server


def receive(server: HTTP2Adapter, data: bytes) -> list[Event]:
    server.feed(data)
    events: list[Event] = []
    while server.backlog:
        events += server.receive()
    return events


def test_a_body_in_one_frame_after_its_head_comes_with_the_head() -> None:
    server, client = adapter(), Client()
    [started] = receive(server, client.head(1) + data_frame(1, b"abc", end=True))
    assert isinstance(started, RequestStarted)
    assert (started.stream_id, started.ended, started.body) == (1, True, (b"abc", 3))
    assert started.head.target == b"/echo"


def test_the_body_s_window_cost_counts_its_padding() -> None:
    server, client = adapter(), Client()
    payload = bytes([4]) + b"abc" + b"\0" * 4  # pad length, data, padding
    [started] = receive(server, client.head(1) + frame(DATA, END_STREAM | PADDED, 1, payload))
    assert isinstance(started, RequestStarted)
    assert started.body == (b"abc", 8)


def test_an_empty_last_frame_is_an_empty_body() -> None:
    server, client = adapter(), Client()
    [started] = receive(server, client.head(1) + data_frame(1, b"", end=True))
    assert isinstance(started, RequestStarted)
    assert (started.ended, started.body) == (True, (b"", 0))


@pytest.mark.parametrize(
    "case",
    ["body_goes_on", "second_frame_ends", "separate_reads", "other_stream_between", "two_slices"],
)
def test_any_other_body_comes_on_its_own(case: str) -> None:
    server, client = adapter(max_frames_per_step=1 if case == "two_slices" else 64), Client()
    if case == "body_goes_on":
        events = receive(server, client.head(1) + data_frame(1, b"abc"))
        events += receive(server, data_frame(1, b"de", end=True))
    elif case == "second_frame_ends":
        events = receive(
            server, client.head(1) + data_frame(1, b"abc") + data_frame(1, b"de", end=True)
        )
    elif case == "separate_reads":
        events = receive(server, client.head(1))
        events += receive(server, data_frame(1, b"abcde", end=True))
    elif case == "other_stream_between":
        heads = client.head(1) + client.head(3, end=True)
        events = receive(server, heads + data_frame(1, b"abcde", end=True))
        other = events.pop(1)
        assert isinstance(other, RequestStarted)
        assert (other.stream_id, other.ended, other.body) == (3, True, None)
    else:
        events = receive(server, client.head(1) + data_frame(1, b"abcde", end=True))
    started, *body, end = events
    assert isinstance(started, RequestStarted)
    assert (started.ended, started.body) == (False, None)
    assert all(isinstance(piece, BodyReceived) for piece in body)
    assert b"".join(piece.data for piece in body) == b"abcde"  # type: ignore[union-attr]
    assert end == BodyEnded(1)


async def test_a_body_that_came_with_its_head_is_served() -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        for sid in (1, 3, 5, 7, 9):  # 5 x 16000 bytes: the connection window reopens
            fields = request_fields(b"POST", b"/echo")
            body = bytes([sid]) * 16000
            await peer.send(
                peer.headers_frame(sid, fields, end_stream=False), data_frame(sid, body, end=True)
            )
            result = await peer.response(sid)
            assert (result.status, bytes(result.body)) == (200, body)


async def test_a_refused_stream_s_body_reopens_the_connection_window() -> None:
    # Streams past max_concurrent_streams are refused: what their bodies cost the connection
    # window is handed back at once, so that five of 16,000 bytes (more than the 65,535 of
    # the window) do not make the client's next request break flow control.
    lab = Lab()
    config = h2_config(max_concurrent_streams=1, http2_connection_window=65535)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/hold")
        await lab.started["hold"].wait()
        fields = request_fields(b"POST", b"/echo")
        for sid in (3, 5, 7, 9, 11):
            await peer.send(
                peer.headers_frame(sid, fields, end_stream=False),
                data_frame(sid, b"x" * 16000, end=True),
            )
            assert (await peer.response(sid)).reset == REFUSED_STREAM
        lab.release("hold")
        assert (await peer.response(1)).status == 200
        await peer.request(13, b"POST", b"/echo", body=b"x" * 16000)
        assert (await peer.response(13)).status == 200
        assert peer.goaways == []
