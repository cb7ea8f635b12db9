"""``queue_response``: a whole response (HEADERS, then one DATA frame that ends the stream, or
HEADERS alone that end it) queued with the state changes h2's ``send_headers`` and
``send_data`` make, without their general machinery.

h2 builds a response through several layers for every frame (header normalization and
validation flags, frame objects, flag sets, per-frame serialization). For the common response,
a final status and a body the windows and the frame size take at once, the outcome is fixed:
the connection's state machine takes SEND_HEADERS, the stream's SEND_HEADERS (then SEND_DATA)
and SEND_END_STREAM, both send windows shrink by the body's length, and a HEADERS frame (with
CONTINUATION frames for a block larger than a frame) and a DATA frame go out.
``queue_response`` makes exactly those changes on h2's own objects (a stream that received its
request's head directly, any other through h2's state machines, so that every error h2 raises
for a stream that is gone or a connection that is closed is raised here too, before anything
is encoded or queued), and writes the frames itself; any other response is
left to h2 (``None``). ``tests/protocol/test_http2_response.py`` holds it to h2's path byte
for byte and state for state. Nothing here imports trio.
"""

from __future__ import annotations

import struct

import h2.connection
from h2.connection import ConnectionInputs, ConnectionState
from h2.stream import H2Stream, StreamClosedBy, StreamInputs, StreamState

from .._http.headers import Header

__all__ = ["queue_response"]

_FRAME_HEADER = struct.Struct(">HBBBL")  # 24-bit length (16 + 8), type, flags, stream id
_DATA, _HEADERS, _CONTINUATION = 0x0, 0x1, 0x9
_END_STREAM, _END_HEADERS = 0x1, 0x4
_SERVER_OPEN = ConnectionState.SERVER_OPEN
_OPEN, _HALF_CLOSED_LOCAL = StreamState.OPEN, StreamState.HALF_CLOSED_LOCAL
_HALF_CLOSED_REMOTE, _CLOSED = StreamState.HALF_CLOSED_REMOTE, StreamState.CLOSED


def queue_response(
    machine: h2.connection.H2Connection,
    stream_id: int,
    status: int,
    fields: list[Header],
    body: bytes,
) -> bytes | None:
    """The frames of a response with ``fields`` (``:status`` first) and ``body`` (``b""``:
    the head ends the stream), after the state changes h2 makes for them; ``None`` when h2
    must send it itself (an informational status, a body the windows or the frame size do
    not take at once, a stream unknown or whose head was sent). The fields are encoded after
    the state machines accepted the response, as h2 does (the encoder's table size update
    goes out with the block that carries it). Raises what h2 raises for the same response
    (``h2.exceptions.ProtocolError``)."""
    stream = machine.streams.get(stream_id)
    if stream is None or status < 200 or stream.state_machine.headers_sent:
        return None
    size = len(body)
    frame_size = machine.max_outbound_frame_size
    if size > frame_size:
        return None
    if size > machine.outbound_flow_control_window or size > stream.outbound_flow_control_window:
        return None
    _send_head_and_end(machine, stream, body=bool(body))
    block = machine.encoder.encode(fields)
    length = len(block)
    if length > frame_size:
        head = _head(block, stream_id, frame_size, end=not body)
    else:  # (the usual: one HEADERS frame)
        flags = _END_HEADERS if body else _END_HEADERS | _END_STREAM
        head = _FRAME_HEADER.pack(length >> 8, length & 0xFF, _HEADERS, flags, stream_id) + block
    if not body:
        return head
    stream.outbound_flow_control_window -= size
    machine.outbound_flow_control_window -= size
    data = _FRAME_HEADER.pack(size >> 8, size & 0xFF, _DATA, _END_STREAM, stream_id)
    return b"".join((head, data, body))


def _send_head_and_end(
    machine: h2.connection.H2Connection, stream: H2Stream, *, body: bool
) -> None:
    """The state changes of a response's head, its body if any, and its end: the
    connection takes SEND_HEADERS (then SEND_DATA, a step from SERVER_OPEN to itself), the
    stream SEND_HEADERS, SEND_DATA (with a body) and SEND_END_STREAM. A server's stream that has received
    its request's head (OPEN, or HALF_CLOSED_REMOTE once the request ended) takes them
    without h2's table of transitions; any other goes through it, which raises h2's error."""
    connection = machine.state_machine
    if connection.state is not _SERVER_OPEN:
        connection.process_input(ConnectionInputs.SEND_HEADERS)
    states = stream.state_machine
    if states.client is False and states.state is _HALF_CLOSED_REMOTE:
        states.headers_sent = True
        states.state = _CLOSED
        states.stream_closed_by = StreamClosedBy.SEND_END_STREAM
    elif states.client is False and states.state is _OPEN:
        states.headers_sent = True
        states.state = _HALF_CLOSED_LOCAL
    else:
        states.process_input(StreamInputs.SEND_HEADERS)
        if body:
            states.process_input(StreamInputs.SEND_DATA)
        states.process_input(StreamInputs.SEND_END_STREAM)


def _head(block: bytes, stream_id: int, frame_size: int, *, end: bool) -> bytes:
    """A header block as a HEADERS frame and as many CONTINUATION frames as the frame size
    asks for; ``end``: the HEADERS frame ends the stream."""
    first = _END_STREAM if end else 0
    if len(block) <= frame_size:
        return _header(len(block), _HEADERS, first | _END_HEADERS, stream_id) + block
    pieces = [block[start : start + frame_size] for start in range(0, len(block), frame_size)]
    frames = [_header(len(pieces[0]), _HEADERS, first, stream_id), pieces[0]]
    for piece in pieces[1:-1]:
        frames += [_header(len(piece), _CONTINUATION, 0, stream_id), piece]
    frames += [_header(len(pieces[-1]), _CONTINUATION, _END_HEADERS, stream_id), pieces[-1]]
    return b"".join(frames)


def _header(length: int, kind: int, flags: int, stream_id: int) -> bytes:
    return _FRAME_HEADER.pack(length >> 8, length & 0xFF, kind, flags, stream_id)
