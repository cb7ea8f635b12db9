"""h2's connection state machine adjusted for a server that judges streams one by one
(``ServerMachine``), with what it needs: local settings that announce MAX_CONCURRENT_STREAMS
without h2 enforcing it (``ServerSettings``: the server counts streams itself) and HPACK
decoding with a fixed hard limit (``BoundedDecoder``) and encoding that never indexes
(``http2_encoder.FieldEncoder``). ``http2.HTTP2Adapter`` is their user.
Nothing here imports trio.
"""

from __future__ import annotations

from typing import Any

import h2.config
import h2.connection
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes
from h2.stream import STREAM_OPEN, StreamState
from h2.windows import WindowManager
from hyperframe.frame import Frame, RstStreamFrame, WindowUpdateFrame

from .http2_compact import CompactSettings, FrameDispatch, compact_table
from .http2_decoder import BoundedDecoder
from .http2_encoder import FieldEncoder
from .http2_frames import DATA, END_HEADERS, END_STREAM, FRAME_HEADER_SIZE, HEADERS
from .http2_inbound import open_stream, receive_body

__all__ = ["ServerMachine", "ServerSettings"]

#: The stream states in which a client may send DATA.
_RECEIVING = frozenset({StreamState.OPEN, StreamState.HALF_CLOSED_LOCAL})
_DIRECT = frozenset({HEADERS, DATA})  # the frame types receive_frames may hand over directly


class ServerSettings(CompactSettings):
    """Local settings whose MAX_CONCURRENT_STREAMS is announced but not enforced by h2 (the
    server counts streams itself and refuses the extra ones with REFUSED_STREAM)."""

    @property
    def max_concurrent_streams(self) -> int:
        return 2**32

    @max_concurrent_streams.setter
    def max_concurrent_streams(self, value: int) -> None:
        self[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = value


class ServerMachine(h2.connection.H2Connection):
    """h2's connection with errors of one stream kept to that stream: a malformed head
    (after HPACK decoding succeeded, so the compression state stays shared and correct) or a
    body that breaks its Content-Length resets the stream with PROTOCOL_ERROR. It counts the
    RST_STREAM frames it queues (``resets_sent``), whoever asked for them: the adapter
    charges those a client's frames provoke."""

    def __init__(self, config: h2.config.H2Configuration, hard_limit: int) -> None:
        super().__init__(config)
        self.decoder = self._decoder = BoundedDecoder(hard_limit)
        self.encoder = FieldEncoder()
        # Lists, not deques, for the settings and the decoder's table, and no bound method
        # per frame type held (``http2_compact``).
        self.remote_settings = CompactSettings(client=not config.client_side)
        compact_table(self._decoder.header_table)
        self._frame_dispatch_table = FrameDispatch(self)  # type: ignore[assignment]
        self.malformed: list[tuple[int, int]] = []  # (stream id, unreturned window bytes)
        self.resets_sent = 0
        self._next_walk = 0  # the table size at which open_inbound_streams walks it again

    def receive_frames(self, data: bytes | memoryview) -> list[Any]:
        """``receive_data``, with a client's most common frames read directly
        (``http2_inbound``), without h2's frame buffer, frame objects and dispatch: a HEADERS
        frame that opens a stream in one frame (END_HEADERS, no padding, no priority) and a
        DATA frame without padding on a stream the client may send on. Every other frame,
        and every frame while h2's buffer holds anything (the preface, a partial frame, a
        header block in CONTINUATION frames), goes through ``receive_data``, in order.
        Raises what ``receive_data`` raises, after queuing the same GOAWAY."""
        buffer = self.incoming_buffer
        if buffer._data or buffer._preamble_len or buffer._headers_buffer:
            return self.receive_data(data)
        view = memoryview(data)
        events: list[Any] = []
        start = position = 0
        size = len(view)
        while position + FRAME_HEADER_SIZE <= size:
            end = position + FRAME_HEADER_SIZE + int.from_bytes(view[position : position + 3])
            if end > size:
                break
            kind, flags = view[position + 3], view[position + 4]
            simple = flags & ~END_STREAM == (END_HEADERS if kind == HEADERS else 0)
            if (
                kind in _DIRECT
                and simple
                and end - position - FRAME_HEADER_SIZE <= self.max_inbound_frame_size
            ):
                stream_id = int.from_bytes(view[position + 5 : position + 9]) & 0x7FFFFFFF
                direct = self._direct(kind, stream_id)
            else:
                direct = False
            if direct and start < position:
                # What came before first: the state it leaves counts, and may refuse it now.
                events += self.receive_data(view[start:position])
                start = position
                direct = self._direct(kind, stream_id)
            if direct:
                payload = view[position + FRAME_HEADER_SIZE : end].tobytes()
                ended = bool(flags & END_STREAM)
                try:  # each frame's errors as h2's handlers handle them (a reset of its stream)
                    if kind == HEADERS:
                        decoded = self._decoder.blocks
                        try:
                            events += open_stream(self, stream_id, payload, ended)
                        except h2.exceptions.ProtocolError as exc:
                            events += self._head_failed(exc, stream_id, decoded)
                    else:
                        try:
                            events += receive_body(self, self.streams[stream_id], payload, ended)
                        except h2.exceptions.InvalidBodyLengthError:
                            events += self._reset_malformed(stream_id, len(payload))[1]
                except h2.exceptions.ProtocolError as exc:  # (as h2's frame dispatch ends it:
                    self._terminate_connection(exc.error_code)  # those frames raise no error
                    raise  # it would turn into a reset)
                start = end
            position = end
        if start < size:
            events += self.receive_data(view[start:])
        return events

    def _direct(self, kind: int, stream_id: int) -> bool:
        """Whether ``receive_frames`` reads a HEADERS or DATA frame without padding or
        priority directly (``open_stream``, ``receive_body``); not when h2 must read it: a
        HEADERS frame that does not open a new stream (trailers, a stream id reused: h2's
        checks), a DATA frame on a stream closed, unknown or that the client may no longer
        send on (h2's answers), and any frame while a header block is open."""
        if self.incoming_buffer._headers_buffer:
            return False
        if kind == HEADERS:
            return bool(stream_id & 1) and stream_id > self.highest_inbound_stream_id
        stream = self.streams.get(stream_id)
        return stream is not None and stream.state_machine.state in _RECEIVING

    @property
    def open_inbound_streams(self) -> int:
        """At least the number of open streams. h2 reads this for every new stream, only to
        compare it with MAX_CONCURRENT_STREAMS (which ``ServerSettings`` puts out of reach), and
        its own count walks the whole stream table, dropping the closed streams: a read of N
        new streams cost N squared. The walk runs here only once the table has doubled since
        the last one (linear in all); in between, every stream in the table is counted."""
        if len(self.streams) < self._next_walk:
            return len(self.streams)
        return self._walk_streams()

    def forget_closed_streams(self) -> None:
        """Drop the closed streams from the table now (h2 keeps each stream's state until it
        next counts them): for a connection with no stream in progress, which may stay idle
        for long."""
        self._walk_streams()

    def _walk_streams(self) -> int:
        """h2's count of the open inbound streams (``_open_streams``): the closed ones leave
        the table for ``_closed_streams``, as there, without three property calls a stream."""
        count, closed, streams = 0, [], self.streams
        for stream_id, stream in streams.items():
            state = stream.state_machine.state
            if STREAM_OPEN[state] and stream_id % 2:  # (a client's stream ids are odd)
                count += 1
            elif state is StreamState.CLOSED:
                closed.append(stream_id)
        for stream_id in closed:
            self._closed_streams[stream_id] = streams.pop(stream_id).state_machine.stream_closed_by
        self._next_walk = 2 * len(streams) + 64
        return count

    def acknowledge_received_data(self, acknowledged_size: int, stream_id: int) -> None:
        """h2's, without its log calls, stream lookup and empty frame list for a stream in the
        table: the connection's window reopens by ``acknowledged_size``, and the stream's
        too while it is open in any sense (h2's ``H2Stream.open``), each with a WINDOW_UPDATE
        once due (``_reopen``). Any other stream, and any invalid argument, goes to h2's own
        (its answers)."""
        stream = self.streams.get(stream_id)
        if stream is None or acknowledged_size < 0:
            super().acknowledge_received_data(acknowledged_size, stream_id)
            return
        frames: list[Frame] = []
        increment = _reopen(self._inbound_flow_control_window_manager, acknowledged_size)
        if increment:
            frames.append(_window_update(0, increment))
        if STREAM_OPEN[stream.state_machine.state]:
            increment = _reopen(stream._inbound_window_manager, acknowledged_size)
            if increment:
                frames.append(_window_update(stream_id, increment))
        if frames:
            self._prepare_for_sending(frames)

    def _prepare_for_sending(self, frames: list[Frame]) -> None:
        if frames:  # (h2 calls this once for every frame it receives, mostly with none)
            for frame in frames:
                if type(frame) is RstStreamFrame:
                    self.resets_sent += 1
            super()._prepare_for_sending(frames)

    def _receive_headers_frame(self, frame: Any) -> Any:
        decoded = self._decoder.blocks
        try:
            return super()._receive_headers_frame(frame)
        except (h2.exceptions.NoSuchStreamError, h2.exceptions.StreamIDTooLowError):
            raise
        except h2.exceptions.ProtocolError as exc:
            return [], self._head_failed(exc, frame.stream_id, decoded)

    def _head_failed(
        self, exc: h2.exceptions.ProtocolError, stream_id: int, decoded: int
    ) -> list[Any]:
        """A head's error: the connection's when HPACK failed (the decoder had decoded
        ``decoded`` blocks before it) or the stream cannot be reset (raised again, as a
        COMPRESSION_ERROR for an undecodable block); else its stream's (reset)."""
        if self._decoder.blocks == decoded or not self._is_open(stream_id):
            if type(exc) is h2.exceptions.ProtocolError and exc.__cause__ is not None:
                exc.error_code = ErrorCodes.COMPRESSION_ERROR  # undecodable (9113 4.3)
            raise exc
        return self._reset_malformed(stream_id, 0)[1]

    def _receive_data_frame(self, frame: Any) -> Any:
        try:
            return super()._receive_data_frame(frame)
        except h2.exceptions.InvalidBodyLengthError:
            return self._reset_malformed(frame.stream_id, frame.flow_controlled_length)

    def _is_open(self, stream_id: int) -> bool:
        stream = self.streams.get(stream_id)
        return stream is not None and not stream.closed

    def _reset_malformed(self, stream_id: int, window: int) -> tuple[list[Any], list[Any]]:
        self.malformed.append((stream_id, window))
        self.reset_stream(stream_id, ErrorCodes.PROTOCOL_ERROR)
        return [], []


def _reopen(window: WindowManager, size: int) -> int | None:
    """``window.process_bytes(size)``: ``size`` more bytes processed, and the increment of
    the WINDOW_UPDATE due, if any. While the window is not exhausted and less than half of it
    has been processed, none is due by h2's rule and only the count grows; otherwise h2's
    own step decides."""
    processed = window._bytes_processed + size
    if processed and window.current_window_size and processed < window.max_window_size // 2:
        window._bytes_processed = processed
        return 0
    return window.process_bytes(size)


def _window_update(stream_id: int, increment: int) -> WindowUpdateFrame:
    frame = WindowUpdateFrame(stream_id)
    frame.window_increment = increment
    return frame
