"""``open_stream`` and ``receive_body``: a client's HEADERS frame that opens a stream and its
DATA frames, read with the state changes and the events h2's handlers make, without their
general machinery.

For every frame h2 builds a frame object with a set of flags, runs the connection's and the
stream's state machines (a dictionary keyed by pairs of enum members, hashed in Python), logs
to a logger that is off and builds header validation flags that a server validating heads
itself never reads. For the frames a client sends most, the outcome is fixed:

- HEADERS opening a stream (one frame, no padding, no priority): the connection stays
  SERVER_OPEN, a new ``H2Stream`` enters OPEN (HALF_CLOSED_REMOTE with END_STREAM), and the
  events are ``RequestReceived`` (then ``StreamEnded``);
- DATA without padding on a stream the client may send on: both receive windows shrink by its
  length, the body's length is checked against Content-Length, and the event is
  ``DataReceived`` (then ``StreamEnded``).

These functions make exactly those changes on h2's own objects, so that h2 carries on from
the state it would have reached, and hand every other case (a connection not yet or no longer
SERVER_OPEN, an informational head) to h2's own steps. The errors are h2's, raised at the
same points. ``tests/protocol/test_http2_receive.py`` holds them to h2's path, state for state.
Nothing here imports trio.
"""

from __future__ import annotations

from typing import Any

import h2.connection
from h2.connection import ConnectionInputs, ConnectionState
from h2.events import DataReceived, RequestReceived, StreamEnded
from h2.exceptions import FlowControlError, InvalidBodyLengthError
from h2.settings import SettingCodes
from h2.stream import H2Stream, StreamClosedBy, StreamState
from h2.utilities import is_informational_response

from .http2_decoder import BoundedDecoder

__all__ = ["open_stream", "receive_body"]

_SERVER_OPEN = ConnectionState.SERVER_OPEN
_OPEN, _HALF_CLOSED_REMOTE = StreamState.OPEN, StreamState.HALF_CLOSED_REMOTE
_CLOSED = StreamState.CLOSED
_INITIAL_WINDOW_SIZE = SettingCodes.INITIAL_WINDOW_SIZE
_SHRUNK = "Flow control window shrunk below 0"  # (h2's message)
_decode_headers = h2.connection._decode_headers


def open_stream(
    machine: h2.connection.H2Connection, stream_id: int, block: bytes, end: bool
) -> list[Any]:
    """Open stream ``stream_id`` (odd, above every stream the client opened) from a header
    block in one HEADERS frame; ``end``: the frame ends the stream. Returns the events, as
    h2's ``_receive_headers_frame``. Raises what h2 raises: a
    ``ProtocolError`` when the block cannot be decoded or the connection is closed (before
    the stream exists), and one from the stream's Content-Length (after)."""
    machine.open_inbound_streams  # noqa: B018 (h2 reads it here; it drops closed streams)
    decoder = machine.decoder  # (a ``BoundedDecoder``: its one-byte fields read at once)
    if type(decoder) is BoundedDecoder and (indexed := decoder.indexed_only(block)) is not None:
        headers: Any = indexed
        decoder.blocks += 1
    else:
        headers = _decode_headers(decoder, block)
    connection = machine.state_machine
    if connection.state is not _SERVER_OPEN:
        connection.process_input(ConnectionInputs.RECV_HEADERS)
    stream = H2Stream(  # (the settings' current values, ``[0]``, read as h2's properties do)
        stream_id,
        machine.config,
        machine.local_settings._settings[_INITIAL_WINDOW_SIZE][0],
        machine.remote_settings._settings[_INITIAL_WINDOW_SIZE][0],
    )
    stream.max_outbound_frame_size = machine.max_outbound_frame_size
    machine.streams[stream_id] = stream
    machine.highest_inbound_stream_id = stream_id
    if is_informational_response(headers):  # (h2 refuses it: a response's head)
        return stream.receive_headers(headers, end, machine.config.header_encoding)[1]
    states = stream.state_machine
    states.client, states.headers_received = False, True
    received = RequestReceived(stream_id=stream_id)
    received.headers = list(headers)
    if end:
        states.state = _HALF_CLOSED_REMOTE
        ended = received.stream_ended = StreamEnded(stream_id=stream_id)
        events: list[Any] = [received, ended]
    else:
        states.state = _OPEN
        events = [received]
    stream._initialize_content_length(headers)
    return events


def receive_body(
    machine: h2.connection.H2Connection, stream: H2Stream, data: bytes, end: bool
) -> list[Any]:
    """A DATA frame without padding on ``stream``, which is OPEN or HALF_CLOSED_LOCAL;
    ``end``: the frame ends the stream. Returns the events, as h2's
    ``_receive_data_frame``. Raises what h2 raises: a ``FlowControlError`` past a window,
    an ``InvalidBodyLengthError`` for a body longer than its Content-Length or one that
    ends shorter (the stream's state is then as h2 leaves it)."""
    connection = machine.state_machine
    if connection.state is not _SERVER_OPEN:
        connection.process_input(ConnectionInputs.RECV_DATA)
    size = len(data)
    window = machine._inbound_flow_control_window_manager  # (``window_consumed``, inline)
    window.current_window_size -= size
    if window.current_window_size < 0:
        raise FlowControlError(_SHRUNK)
    states = stream.state_machine
    if not states.headers_received:  # (h2's check; a stream the client may send on has them)
        return stream.receive_data(data, end, size)[1]
    received = DataReceived(stream_id=stream.stream_id)
    window = stream._inbound_window_manager
    window.current_window_size -= size
    if window.current_window_size < 0:
        raise FlowControlError(_SHRUNK)
    received_size = stream._actual_content_length = stream._actual_content_length + size
    expected = stream._expected_content_length  # (``_track_content_length``'s checks)
    if expected is not None and (expected < received_size or (end and expected != received_size)):
        raise InvalidBodyLengthError(expected, received_size)
    received.data = data
    received.flow_controlled_length = size
    if not end:
        return [received]
    ended = received.stream_ended = StreamEnded(stream_id=stream.stream_id)
    if states.state is _OPEN:
        states.state = _HALF_CLOSED_REMOTE
    else:  # HALF_CLOSED_LOCAL: the response went out first
        states.state = _CLOSED
        states.stream_closed_by = StreamClosedBy.RECV_END_STREAM
    return [received, ended]
