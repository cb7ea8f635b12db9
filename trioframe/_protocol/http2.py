"""``HTTP2Adapter``: the server side of one HTTP/2 connection, sans-I/O, over h2.

h2 parses frames, keeps HPACK state and the stream and connection state machines. The adapter
adds what a server needs around it:

- the settings a server announces (``HTTP2Limits``), including RFC 8441 extended CONNECT;
- request heads validated per stream (``http2_head``): a malformed head, or a body that does
  not match its Content-Length, resets or answers its stream, never the connection (h2 alone
  would end the connection);
- ``max_concurrent_streams`` counted by the server (a stream counts until its handler has
  returned, not only while the protocol says it is open), so h2's own refusal, which ends the
  whole connection, never fires;
- flow control by consumption: a stream's window, and the connection's, reopen only as the
  handler reads the body (``consumed``) or the server drops it (``discard``);
- the flood account (``http2_frames.FrameMeter``) and GOAWAY frames the server writes itself,
  so that shutdown can announce GOAWAY twice and keep serving the streams in flight (h2's own
  GOAWAY would close its state machine).

``feed`` takes what the server read; ``receive`` meters it and hands it to h2 one slice of
at most ``max_frames_per_step`` frames at a time (a flood, or a frame above the frame size,
is refused before h2 sees it), and turns each slice into the adapter's events, so that the
server can refuse the streams it cannot take, and let other connections run, between two
slices. Errors of the whole connection raise ``ConnectionFailed`` after the GOAWAY is
queued. Output accumulates until ``data_to_send``. Nothing here imports trio.
"""

from __future__ import annotations

from typing import Any

import attrs
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes
from h2.events import DataReceived, RequestReceived, StreamEnded
from h2.stream import StreamState
from hyperframe.frame import GoAwayFrame

from .._http.headers import Header
from .http2_events import (
    BodyEnded,
    BodyReceived,
    Event,
    PeerClosed,
    PingAcked,
    RequestRefused,
    RequestStarted,
    StreamReset,
    WindowOpened,
)
from .http2_frames import Flood, FrameMeter, FrameTooLarge
from .http2_head import MalformedHead, read_request_head
from .http2_machine import ServerMachine, ServerSettings
from .http2_response import queue_response
from .request_head import RequestHead

__all__ = ["LAST_STREAM_ID", "ConnectionFailed", "HTTP2Adapter", "HTTP2Limits"]

LAST_STREAM_ID = 2**31 - 1
_REMOTE_OPEN = frozenset({StreamState.OPEN, StreamState.HALF_CLOSED_LOCAL})

#: Response fields HTTP/2 forbids (RFC 9113 section 8.2.2); dropped from what the app set.
_CONNECTION_SPECIFIC = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"}
)


def _fields(status: int, headers: list[Header]) -> list[Header]:
    """A response head's fields: ``:status`` first, then ``headers`` but those HTTP/2
    forbids."""
    fields = [(b":status", b"%d" % status)]
    for field in headers:
        if field[0] not in _CONNECTION_SPECIFIC:
            fields.append(field)
    return fields


#: Request heads a connection remembers (``HTTP2Adapter._read_head``), each of fields of at
#: most ``_REMEMBERED_HEAD_SIZE`` bytes in all; it forgets them all when full.
_REMEMBERED_HEADS = 16
_REMEMBERED_HEAD_SIZE = 2048


@attrs.frozen
class HTTP2Limits:
    """What one HTTP/2 connection allows (from ``ServerConfig``)."""

    max_concurrent_streams: int = 100
    max_header_list_size: int = 32 * 1024
    max_header_count: int = 100
    max_continuation_frames: int = 16
    flood_allowance: int = 1000
    stream_window: int = 64 * 1024
    connection_window: int = 1024 * 1024
    max_requests: int = 1000
    max_frames_per_step: int = 64


class ConnectionFailed(Exception):
    """The connection cannot go on (a protocol error, a flood); the GOAWAY is queued.
    ``str()`` is the reason for the log; ``reason`` says which, in a word for metrics:
    ``"flood"``, ``"frame_too_large"`` or ``"protocol_error"``."""

    def __init__(self, message: str, reason: str = "protocol_error") -> None:
        super().__init__(message)
        self.reason = reason


# -- the adapter ---------------------------------------------------------------------------------
class HTTP2Adapter:
    """One server connection's HTTP/2 state (see the module docstring). Creating it queues the
    server's SETTINGS and the connection window."""

    def __init__(self, limits: HTTP2Limits) -> None:
        self.limits = limits
        config = h2.config.H2Configuration(
            client_side=False,
            header_encoding=None,
            validate_inbound_headers=False,  # http2_head does it, per stream
            normalize_inbound_headers=False,
            validate_outbound_headers=False,  # the exchange sends lower-case names only
            normalize_outbound_headers=False,
        )
        hard_limit = 2 * limits.max_header_list_size
        h2c = self._h2 = ServerMachine(config, hard_limit)
        h2c.local_settings = ServerSettings(
            client=False,
            initial_values={
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: limits.max_concurrent_streams,
                h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: limits.max_header_list_size,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: limits.stream_window,
                h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL: 1,
            },
        )
        h2c.initiate_connection()
        if limits.connection_window > 65535:
            h2c.increment_flow_control_window(limits.connection_window - 65535)
        self.meter = FrameMeter(
            allowance=limits.flood_allowance,
            max_continuation_frames=limits.max_continuation_frames,
            max_block_size=hard_limit,
            max_frame_size=h2c.max_inbound_frame_size,
            slice_frames=limits.max_frames_per_step,
        )
        self._unread: bytes | bytearray = b""  # the bytes fed; those before _offset are read
        self._offset = 0
        self._out = bytearray(h2c.data_to_send())
        self._ended_with_head: object = None  # the last request's StreamEnded, if it had one
        self._heads: dict[tuple[Header, ...], RequestHead] = {}  # (``_read_head``)
        #: streams opened so far (``max_requests`` ends the connection after that many)
        self.requests = 0
        #: the last stream id a final GOAWAY promised to serve (``None``: none sent)
        self.goaway_last_id: int | None = None
        self.closed = False  # a GOAWAY with an error went out: nothing more is read

    # -- input ---------------------------------------------------------------------------------
    def feed(self, data: bytes | bytearray) -> None:
        """Take the next bytes from the client (``backlog`` must be false); ``receive``
        hands them to h2."""
        self._unread, self._offset = data, 0

    @property
    def backlog(self) -> bool:
        """Whether bytes fed are still waiting for ``receive``."""
        return self._offset < len(self._unread)

    def receive(self) -> list[Event]:
        """Meter the next slice of the bytes fed (at most ``max_frames_per_step`` frames),
        hand it to h2 and return the events it makes (``backlog`` must be true). The server
        refuses the streams it cannot take between two slices, and the resets that costs
        count before the next one. Raises ``ConnectionFailed`` (GOAWAY queued) when the
        connection must end: a flood or a frame too large is refused before h2 sees it."""
        start = self._offset
        try:
            self.meter.check()  # resets the server made since the last slice count too
            self._offset = self.meter.scan(self._unread, start)
        except Flood as exc:
            self._fail(ErrorCodes.ENHANCE_YOUR_CALM, f"flood: {exc}", "flood")
        except FrameTooLarge as exc:  # refused before h2 buffers the payload to check it
            self._fail(ErrorCodes.FRAME_SIZE_ERROR, str(exc), "frame_too_large")
        data = memoryview(self._unread)[start : self._offset]
        resets = self._h2.resets_sent
        try:
            h2_events = self._h2.receive_frames(data)
        except h2.exceptions.ProtocolError as exc:
            self._take_output()  # h2 queued its GOAWAY
            self.closed = True
            self._drop_unread()
            raise ConnectionFailed(f"protocol error: {exc}") from None
        # Every stream the client's frames made the server reset, and every frame h2
        # answered with RST_STREAM (DATA or HEADERS on a closed stream), is overhead.
        self.meter.charge(self._h2.resets_sent - resets)
        events: list[Event] = []
        for event in h2_events:  # (the kinds of every request in place, the others aside)
            kind = type(event)
            if kind is RequestReceived:
                self._request(event, events)
            elif kind is DataReceived:
                started = events[-1] if events else None
                if (
                    type(started) is RequestStarted
                    and started.stream_id == event.stream_id
                    and event.stream_ended is not None
                    and not started.ended
                ):  # the whole body right after its head: one event for both
                    started.ended, started.body = True, (event.data, event.flow_controlled_length)
                    self._ended_with_head = event.stream_ended
                else:
                    length = event.flow_controlled_length
                    events.append(BodyReceived(event.stream_id, event.data, length))
            elif kind is StreamEnded:  # also after a RequestReceived or DataReceived
                if event is not self._ended_with_head:  # (RequestStarted said it: ``ended``)
                    events.append(BodyEnded(event.stream_id))
            else:
                self._translate(event, events)
        for stream_id, window in self._h2.malformed:
            events.append(StreamReset(stream_id))
            if window:
                self._h2.acknowledge_received_data(window, stream_id)
        self._h2.malformed.clear()
        self._take_output()
        try:
            self.meter.check()  # the resets this input made the server send (CVE-2025-8671)
        except Flood as exc:
            self._fail(ErrorCodes.ENHANCE_YOUR_CALM, f"flood: {exc}", "flood")
        return events

    def _translate(self, event: Any, events: list[Event]) -> None:
        """The events of the h2 events ``receive`` does not read in place."""
        kind = type(event)
        if kind is h2.events.StreamReset:  # by the client, or by h2 (charged in receive)
            events.append(StreamReset(event.stream_id))
        elif kind is h2.events.WindowUpdated:
            events.append(WindowOpened(event.stream_id))
        elif kind is h2.events.RemoteSettingsChanged:
            events.append(WindowOpened(0))  # the initial window or the frame size may change
        elif kind is h2.events.PingAckReceived:
            events.append(PingAcked(event.ping_data))
        elif kind is h2.events.ConnectionTerminated:  # the client's GOAWAY: the rest unread
            events.append(PeerClosed(event.error_code or 0))
            self._drop_unread()
        # The rest need nothing: h2 answers PINGs and SETTINGS itself; trailers are dropped
        # (their StreamEnded follows); priorities are not used.

    def _request(self, event: Any, events: list[Event]) -> None:
        stream_id = event.stream_id
        ended = event.stream_ended is not None
        self._ended_with_head = event.stream_ended  # (h2 puts it right after this event)
        if self.goaway_last_id is not None and stream_id > self.goaway_last_id:
            self.reset(stream_id, ErrorCodes.REFUSED_STREAM)  # after GOAWAY: overhead too
            return
        self.requests += 1
        try:
            head = self._read_head(event.headers)
        except MalformedHead as exc:
            method = dict(event.headers).get(b":method", b"GET")
            events.append(RequestRefused(stream_id, exc.status, exc.message, method))
        else:
            events.append(RequestStarted(stream_id, head, ended))
        if self.requests == self.limits.max_requests:
            self.send_goaway(stream_id)

    def _read_head(self, headers: list[Header]) -> RequestHead:
        """``read_request_head`` of ``headers``, remembered for the connection's next request
        with the same fields (a client asking again for the same resource): the same head,
        immutable (its fields a tuple), serves them all. A head larger than
        ``_REMEMBERED_HEAD_SIZE`` is read every time (a connection holds at most 16 of 2 KiB).
        Raises ``MalformedHead``."""
        key = tuple(headers)
        head = self._heads.get(key)
        if head is None:
            head = read_request_head(
                headers,
                max_header_count=self.limits.max_header_count,
                max_header_list_size=self.limits.max_header_list_size,
                connect_protocol=True,
            )
            head = head._replace(headers=tuple(head.headers))
            if sum(len(name) + len(value) for name, value in key) <= _REMEMBERED_HEAD_SIZE:
                if len(self._heads) >= _REMEMBERED_HEADS:
                    self._heads.clear()
                self._heads[key] = head
        return head

    # -- output --------------------------------------------------------------------------------
    def data_to_send(self) -> bytes:
        """Everything queued for the client, in order; empties the queue."""
        self._take_output()
        data = bytes(self._out)
        self._out.clear()
        return data

    @property
    def pending(self) -> int:
        """Bytes queued for the client and not yet taken."""
        return len(self._out) + len(self._h2._data_to_send)  # (what h2 queued, then ours)

    def _take_output(self) -> None:
        if self._h2._data_to_send:
            self._out += self._h2.data_to_send()

    def send_headers(self, stream_id: int, status: int, headers: list[Header], end: bool) -> None:
        """Queue a response head (``:status`` first; fields HTTP/2 forbids are dropped).
        Raises ``h2.exceptions.ProtocolError`` on a stream that is gone."""
        self._h2.send_headers(stream_id, _fields(status, headers), end_stream=end)

    def send_response(
        self, stream_id: int, status: int, headers: list[Header], body: bytes, *, earned: bool
    ) -> bool:
        """Queue a whole response at once (as ``send_headers`` and ``send_data`` would,
        ``http2_response``) if the windows and the frame size take its body now; returns
        whether it did (nothing is queued when not). A response queued is done: its body
        and its end count as ``send_data`` and ``response_done`` count them. Raises what
        ``send_headers`` raises."""
        frames = queue_response(self._h2, stream_id, status, _fields(status, headers), body)
        if frames is None:
            return False
        if self._h2._data_to_send:  # (what h2 queued before goes out first)
            self._take_output()
        self._out += frames
        if earned:
            self.meter.credit(2 if body else 1)
        return True

    def send_data(
        self, stream_id: int, data: bytes | memoryview, end: bool, *, earned: bool = True
    ) -> None:
        """Queue one DATA frame (``len(data) <= send_window(stream_id)``); ``earned``: it
        counts as work for the flood account (not for the answer to a refused request)."""
        self._h2.send_data(stream_id, data, end_stream=end)
        if data and earned:
            self.meter.credit()

    def end_stream(self, stream_id: int) -> None:
        self._h2.end_stream(stream_id)

    def send_window(self, stream_id: int) -> int:
        """How many body bytes may go out on the stream now (both windows and the frame
        size allow)."""
        return min(self._h2.local_flow_control_window(stream_id), self._h2.max_outbound_frame_size)

    def response_done(self, *, earned: bool = True) -> None:
        """A response went out in full: work done, for the flood account, unless it answered
        a request the server refused (``earned=False``: that refusal was overhead)."""
        if earned:
            self.meter.credit()

    def reset(self, stream_id: int, code: ErrorCodes, *, charge: bool = True) -> None:
        """Reset a stream that is still open; ``charge``: it counts against the flood
        allowance (a stream the server had to refuse or abandon). Nothing after an error
        GOAWAY (h2 refuses any frame once it has closed the connection)."""
        stream = self._h2.streams.get(stream_id)
        if stream is not None and not stream.closed and not self.closed:
            self._h2.reset_stream(stream_id, code)
        if charge:
            self.meter.charge()

    def forget_closed_streams(self) -> None:
        """No stream is in progress: h2 forgets the closed ones now (a connection may stay
        idle for long)."""
        self._h2.forget_closed_streams()

    def remote_open(self, stream_id: int) -> bool:
        """Whether the client may still send on the stream (its request has not ended)."""
        stream = self._h2.streams.get(stream_id)
        return stream is not None and stream.state_machine.state in _REMOTE_OPEN

    def consumed(self, stream_id: int, flow_length: int, *, read: bool = False) -> bool:
        """The server dropped ``flow_length`` window bytes of the stream's body, or a handler
        read them (``read``: work done, for the flood account): the stream and connection
        windows reopen by that much (WINDOW_UPDATE once half a window is due); nothing after
        an error GOAWAY. Returns whether h2 has output queued (the writer is due)."""
        if read:
            self.meter.credit()
        if flow_length and not self.closed:
            self._h2.acknowledge_received_data(flow_length, stream_id)
        return bool(self._h2._data_to_send)

    def refuse(self, stream_id: int) -> None:
        """Refuse a new stream (too many in progress): RST_STREAM(REFUSED_STREAM)."""
        self.reset(stream_id, ErrorCodes.REFUSED_STREAM)

    def ping(self, data: bytes) -> None:
        self._h2.ping(data)

    def send_goaway(self, last_stream_id: int, code: int = 0, debug: bytes = b"") -> None:
        """Queue a GOAWAY without closing h2's state machine (streams up to
        ``last_stream_id`` are still served). The last id only ever goes down."""
        if self.goaway_last_id is not None:
            last_stream_id = min(last_stream_id, self.goaway_last_id)
        if last_stream_id != LAST_STREAM_ID:
            self.goaway_last_id = last_stream_id
        self._take_output()
        frame = GoAwayFrame(
            0, last_stream_id=last_stream_id, error_code=code, additional_data=debug
        )
        self._out += frame.serialize()

    @property
    def last_stream_id(self) -> int:
        """The highest stream id the client has opened."""
        return self._h2.highest_inbound_stream_id

    def _fail(self, code: ErrorCodes, reason: str, kind: str) -> None:
        self.send_goaway(self.last_stream_id, code, reason.encode("ascii", "replace")[:128])
        self.closed = True
        self._drop_unread()
        raise ConnectionFailed(reason, kind)

    def _drop_unread(self) -> None:
        """Nothing more is read: the connection failed, or the client sent GOAWAY."""
        self._unread, self._offset = b"", 0
