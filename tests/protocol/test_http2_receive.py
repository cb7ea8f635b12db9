"""The server's reading of a client's frames (``ServerMachine.receive_frames``: HEADERS frames
that open a stream and DATA frames are read directly, ``http2_inbound``) held to h2's own
(``receive_data``): for any bytes, valid requests mixed with arbitrary frames and cut
anywhere, with the server ending responses in between, the same events, the same output, the
same errors and the same state of the connection and of every stream."""

from __future__ import annotations

import itertools
import struct
from typing import Any

import h2.config
import h2.connection
import h2.exceptions
import pytest
from h2.errors import ErrorCodes
from h2.stream import StreamState
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._protocol.http2 import HTTP2Adapter, HTTP2Limits

_REQUEST = st.tuples(
    st.just("request"),
    st.booleans(),  # a GET (else a POST with a body)
    st.sampled_from([0, 1, 100, 20000]),  # the POST's body
    st.booleans(),  # a long header (a block in CONTINUATION frames)
    st.booleans(),  # with priority information
)
_RAW = st.tuples(
    st.just("raw"),
    st.integers(0, 10),  # frame type
    st.sampled_from([0, 1, 4, 5, 8, 0x20, 0x25, 0xFF]),  # flags
    st.sampled_from([0, 1, 2, 3, 5, 7, 99, 2**31 - 1]),  # stream id
    st.binary(max_size=24),
)
_OTHER = st.sampled_from([("ping",), ("reset",), ("settings",), ("trailers",)])
_OPS = st.lists(st.one_of(_REQUEST, _RAW, _OTHER), min_size=1, max_size=12)


def client_bytes(ops: list[Any]) -> tuple[bytes, list[int]]:
    """The bytes a client sends for ``ops``, and where its writes end (the first: its
    preface and SETTINGS; a request's head and its body are two writes)."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    out = [client.data_to_send()]
    opened: list[int] = []
    for op in ops:
        try:
            if op[0] == "request":
                _, get, size, long, priority = op
                stream_id = client.get_next_available_stream_id()
                headers = [(":method", "GET" if get else "POST"), (":scheme", "https")]
                headers += [(":authority", "example.org"), (":path", "/a")]
                if long:
                    headers.append(("x-long", "v" * 20000))
                if size == 100:  # a body that breaks its Content-Length: its stream is reset
                    headers.append(("content-length", "5"))
                weight = 32 if priority and not long else None  # (h2's client fails both)
                client.send_headers(stream_id, headers, end_stream=get, priority_weight=weight)
                opened.append(stream_id)
                out.append(client.data_to_send())
                if not get:
                    body = b"b" * size
                    client.send_data(stream_id, body[:16384], end_stream=size <= 16384)
                    if size > 16384:
                        client.send_data(stream_id, body[16384:], end_stream=True)
            elif op[0] == "raw":
                _, kind, flags, stream_id, payload = op
                size = len(payload)
                out.append(struct.pack(">HBBBL", size >> 8, size & 0xFF, kind, flags, stream_id))
                out.append(payload)
            elif op[0] == "ping":
                client.ping(b"12345678")
            elif op[0] == "reset" and opened:
                client.reset_stream(opened[-1], ErrorCodes.CANCEL)
            elif op[0] == "settings":
                client.update_settings({h2.settings.SettingCodes.HEADER_TABLE_SIZE: 100})
            elif op[0] == "trailers" and opened:
                client.send_headers(opened[-1], [("x-t", "1")], end_stream=True)
        except h2.exceptions.ProtocolError:
            pass  # the client's own rules refused it: nothing sent
        out.append(client.data_to_send())
    return b"".join(out), list(itertools.accumulate(len(piece) for piece in out))


def outcome(receive: Any, chunk: bytes, adapter: HTTP2Adapter) -> tuple[Any, ...]:
    try:
        events = [repr(event) for event in receive(chunk)]
    except h2.exceptions.ProtocolError as exc:
        return ("error", type(exc), adapter._h2.data_to_send(), state(adapter))
    return ("ok", events, adapter._h2.data_to_send(), state(adapter))


def state(adapter: HTTP2Adapter) -> tuple[Any, ...]:
    """What h2 keeps of the connection and of each stream, in values that compare."""
    machine = adapter._h2
    streams = {
        stream_id: (
            vars(stream.state_machine),
            vars(stream._inbound_window_manager),
            stream.outbound_flow_control_window,
            stream.max_outbound_frame_size,
            stream._expected_content_length,
            stream._actual_content_length,
        )
        for stream_id, stream in machine.streams.items()
    }
    connection = (machine.state_machine.state, vars(machine._inbound_flow_control_window_manager))
    return (connection, machine.highest_inbound_stream_id, streams, machine.malformed)


def respond(adapter: HTTP2Adapter) -> None:
    """The server ends a response on every stream whose request is still coming."""
    for stream_id, stream in list(adapter._h2.streams.items()):
        if stream.state_machine.state is StreamState.OPEN:
            adapter._h2.send_headers(stream_id, [(b":status", b"200")], end_stream=True)


@settings(max_examples=300, deadline=None)
@given(_OPS, st.lists(st.integers(0, 60000), max_size=8), st.lists(st.booleans(), max_size=8))
def test_a_clients_bytes_read_as_h2_reads_them(
    ops: list[Any], cuts: list[int], responses: list[bool]
) -> None:
    data, writes = client_bytes(ops)  # (the server reads what follows the preface itself)
    anywhere = {cut % (len(data) + 1) for cut in cuts[::2]}
    between = {writes[cut % len(writes)] for cut in cuts[1::2]}  # two writes of the client
    points = sorted({0, writes[0], len(data), *anywhere, *between})
    ours, theirs = HTTP2Adapter(HTTP2Limits()), HTTP2Adapter(HTTP2Limits())
    assert ours._h2.data_to_send() == theirs._h2.data_to_send()
    answers = [*responses, *[False] * len(points)]
    for (start, end), answer in zip(itertools.pairwise(points), answers, strict=False):
        chunk = data[start:end]
        mine = outcome(ours._h2.receive_frames, chunk, ours)
        assert mine == outcome(theirs._h2.receive_data, chunk, theirs)
        if mine[0] == "error":
            break
        if answer is True:
            respond(ours)
            respond(theirs)


@settings(max_examples=200, deadline=None)
@given(_OPS, st.lists(st.integers(0, 60000), max_size=8), st.lists(st.booleans(), max_size=16))
def test_acknowledged_data_reopens_the_windows_as_h2s_does(
    ops: list[Any], cuts: list[int], acks: list[bool]
) -> None:
    # ServerMachine.acknowledge_received_data against h2's own, for the body pieces of any
    # client's bytes (acknowledged as they come, later, or never) and for streams that are
    # over, unknown or invalid: the same output, the same state, the same errors.
    data, writes = client_bytes(ops)
    points = sorted({0, writes[0], len(data), *(cut % (len(data) + 1) for cut in cuts)})
    ours, theirs = HTTP2Adapter(HTTP2Limits()), HTTP2Adapter(HTTP2Limits())
    theirs_ack = h2.connection.H2Connection.acknowledge_received_data
    owed: list[tuple[int, int]] = [(1, 0), (0, 1), (2**31 - 1, 1)]  # (stream id, size)
    flags = iter([*acks, *[True] * len(data)])
    for start, end in itertools.pairwise(points):
        try:
            events = ours._h2.receive_frames(data[start:end])
            theirs._h2.receive_frames(data[start:end])
        except h2.exceptions.ProtocolError:
            break
        owed += [(e.stream_id, e.flow_controlled_length) for e in events if hasattr(e, "data")]
        keep = []
        for stream_id, size in owed:
            if not next(flags):
                keep.append((stream_id, size))
                continue
            results = []
            for adapter, acknowledge in (
                (ours, type(ours._h2).acknowledge_received_data),
                (
                    theirs,
                    theirs_ack,
                ),
            ):
                try:
                    acknowledge(adapter._h2, size, stream_id)
                    results.append(("ok", adapter._h2.data_to_send(), state(adapter)))
                except Exception as exc:
                    results.append(("error", type(exc), state(adapter)))
            assert results[0] == results[1]
        owed = keep


def test_new_streams_skip_h2s_frame_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    data, _ = client_bytes([("request", True, 0, False, False)])
    position = 24  # the preface, then frames: find the HEADERS frame of stream 1
    while data[position + 3] != 1:
        position += 9 + int.from_bytes(data[position : position + 3])
    adapter = HTTP2Adapter(HTTP2Limits())
    adapter._h2.receive_frames(data[:position])

    def refuse(*args: object) -> None:
        raise AssertionError("h2's reading ran")

    monkeypatch.setattr(h2.connection.H2Connection, "receive_data", refuse)
    events = adapter._h2.receive_frames(data[position:])
    assert [type(event).__name__ for event in events] == ["RequestReceived", "StreamEnded"]


@pytest.mark.parametrize(
    "ops",
    [
        [("raw", 1, 5, 1, b"\xff\xff\xff\xff")],  # an undecodable block: GOAWAY
        [("raw", 1, 4, 1, b"\x82\x86\x84")],  # a head without :authority: its stream only
        [("request", True, 0, False, False), ("raw", 1, 5, 1, b"")],  # stream 1 again
        [("request", True, 0, False, False), ("reset",), ("raw", 1, 5, 1, b"")],
        [("request", False, 100, False, False), ("raw", 1, 5, 3, b"\x82")],
        [("request", False, 0, False, False), ("raw", 0, 0, 1, b"ab"), ("raw", 0, 1, 1, b"")],
        [("request", False, 0, False, False), ("reset",), ("raw", 0, 1, 1, b"ab")],
        [("request", True, 0, False, False), ("raw", 0, 1, 1, b"ab")],
        [("request", False, 0, False, False), ("raw", 0, 8, 1, b"\x01ab")],
        [("raw", 1, 0, 1, b"\x82"), ("raw", 1, 5, 3, b"\x82")],  # inside a header block
        [("raw", 1, 0x25, 5, b"\x00\x00\x00\x00\x10\x82"), ("raw", 1, 5, 3, b"\x82")],
        [
            ("request", False, 0, False, False),
            ("raw", 3, 0, 1, b"\x00\x00\x00\x08"),
            ("raw", 0, 0, 1, b"ab"),
        ],  # DATA after the stream's reset, in the same read
    ],
)
def test_chosen_frames_read_as_h2_reads_them(ops: list[Any]) -> None:
    test_a_clients_bytes_read_as_h2_reads_them.hypothesis.inner_test(ops, [], [])  # type: ignore[attr-defined]
