"""Raw HTTP/2 clients for the server's conformance and hostile-client tests.

``RawPeer`` writes whatever frames a test asks for (built by hand with ``frame``, HPACK
blocks from an ``hpack.Encoder`` it shares with every HEADERS frame it sends, so the server's
decoder stays in step) and reads the server's frames back with hyperframe, keeping what they
say per stream (``StreamResult``) and per connection (GOAWAY, SETTINGS, PING). By default it
acknowledges the server's SETTINGS and PINGs and reopens the windows of the DATA it reads, as
a well-behaved client would; tests of misbehaviour switch that off.

``H2Client`` is a well-behaved client built on h2's own client state machine: the
connection beside a flood that must still be served, and a check that what the server
writes is valid HTTP/2 (h2 raises on a frame it does not accept).

Both run over any trio stream: in-memory streams served by ``server.handle_stream`` (fast,
deterministic, usable with ``MockClock``), or a real socket to ``server.serve``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import h2.config
import h2.connection
import h2.events
import hpack
import trio
import trio.testing
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

from trioframe import Router, Server, ServerConfig
from trioframe._http.headers import Header
from trioframe._server.http2.connection import HTTP2Connection

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS = 0, 1, 2, 3, 4
PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 6, 7, 8, 9
END_STREAM = ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
#: error codes (RFC 9113 section 7)
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL = 0x5, 0x6, 0x7, 0x8
COMPRESSION_ERROR = 0x9
ENHANCE_YOUR_CALM = 0xB
#: settings (RFC 9113 section 6.5.2)
MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_HEADER_LIST_SIZE = 0x3, 0x4, 0x6
LAST_STREAM_ID = 2**31 - 1
CLIENT = ("127.0.0.1", 50000)


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    """One frame's bytes, exactly as given (no check of any rule)."""
    head = len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream_id.to_bytes(4, "big")
    return head + payload


def settings_frame(settings: dict[int, int] | None = None, *, ack: bool = False) -> bytes:
    payload = b"".join(
        code.to_bytes(2, "big") + value.to_bytes(4, "big")
        for code, value in (settings or {}).items()
    )
    return frame(SETTINGS, ACK if ack else 0, 0, payload)


def window_update(stream_id: int, increment: int) -> bytes:
    return frame(WINDOW_UPDATE, 0, stream_id, increment.to_bytes(4, "big"))


def rst_stream(stream_id: int, code: int = CANCEL) -> bytes:
    return frame(RST_STREAM, 0, stream_id, code.to_bytes(4, "big"))


def ping(data: bytes = b"12345678", *, ack: bool = False) -> bytes:
    return frame(PING, ACK if ack else 0, 0, data)


def data_frame(stream_id: int, data: bytes, *, end: bool = False) -> bytes:
    return frame(DATA, END_STREAM if end else 0, stream_id, data)


def priority(stream_id: int, depends_on: int = 0) -> bytes:
    return frame(PRIORITY, 0, stream_id, depends_on.to_bytes(4, "big") + b"\x10")


@attrs.define
class StreamResult:
    """What the server sent on one stream."""

    headers: list[Header] | None = None
    body: bytearray = attrs.field(factory=bytearray)
    trailers: list[Header] | None = None
    ended: bool = False
    reset: int | None = None  # the RST_STREAM error code

    @property
    def status(self) -> int:
        assert self.headers is not None, f"no response head (reset {self.reset})"
        return int(dict(self.headers)[b":status"])

    def header(self, name: bytes) -> bytes | None:
        return dict(self.headers or []).get(name)

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None


@attrs.frozen
class GoAway:
    last_stream_id: int
    error_code: int
    debug: bytes


class RawPeer:
    """The client end of one HTTP/2 connection, frame by frame (see the module docstring).
    ``auto_ack``: answer SETTINGS and PINGs; ``auto_window``: reopen both windows by what
    each DATA frame cost."""

    def __init__(
        self, stream: trio.abc.Stream, *, auto_ack: bool = True, auto_window: bool = True
    ) -> None:
        self.stream = stream
        self.auto_ack = auto_ack
        self.auto_window = auto_window
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 2**31
        self.buffer = bytearray()
        self.frames: list[Frame] = []  # every frame the server sent, in order
        self.streams: dict[int, StreamResult] = {}
        self.goaways: list[GoAway] = []
        self.server_settings: dict[int, int] = {}
        self.settings_acks = 0  # acknowledgements of our SETTINGS
        self.pings: list[bytes] = []  # PINGs the server sent (not acks)
        self.ping_acks: list[bytes] = []
        self.window_updates: list[tuple[int, int]] = []  # (stream id, increment)
        #: what we may still send (the server's windows as we know them)
        self.connection_window = 65535
        self.stream_windows: dict[int, int] = {}
        self.eof = False
        self.send_failed = False
        #: how long a wait for the server may take (virtual seconds under ``MockClock``)
        self.patience = 600.0
        self._block: tuple[int, int, bytearray] | None = None  # stream, flags, fragments

    # -- writing -----------------------------------------------------------------------
    async def send(self, *chunks: bytes) -> None:
        """Send bytes; once the server has closed the connection they are dropped (and
        ``send_failed`` is set): a test reads what the server said before it closed."""
        try:
            await self.stream.send_all(b"".join(chunks))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.send_failed = True

    async def start(self, settings: dict[int, int] | None = None, window: int = 0) -> None:
        """The preface, our SETTINGS and a connection WINDOW_UPDATE of ``window``."""
        await self.send(
            PREFACE, settings_frame(settings), window_update(0, window) if window else b""
        )

    def block(self, fields: Sequence[Header]) -> bytes:
        """An HPACK block for ``fields`` (from now on the server's table knows it)."""
        return bytes(self.encoder.encode(list(fields)))

    def headers_frame(
        self, stream_id: int, fields: Sequence[Header], *, end_stream: bool = True
    ) -> bytes:
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        return frame(HEADERS, flags, stream_id, self.block(fields))

    async def request(
        self,
        stream_id: int,
        method: bytes = b"GET",
        path: bytes = b"/",
        headers: Sequence[Header] = (),
        body: bytes | None = None,
        *,
        end: bool = True,
    ) -> None:
        """A request head (and ``body`` in DATA frames, ignoring the windows); ``end``: the
        request ends with it."""
        fields = request_fields(method, path, headers)
        await self.send(self.headers_frame(stream_id, fields, end_stream=end and body is None))
        if body is not None:
            await self.send_body(stream_id, body, end=end)

    async def send_body(self, stream_id: int, body: bytes, *, end: bool = True) -> None:
        chunks = [body[i : i + 16384] for i in range(0, len(body), 16384)] or [b""]
        for i, chunk in enumerate(chunks):
            await self.send(data_frame(stream_id, chunk, end=end and i == len(chunks) - 1))

    async def upload(self, stream_id: int, body: bytes, *, end: bool = True) -> None:
        """Send ``body`` as the server's windows allow, reading its frames meanwhile."""
        view = body
        while True:
            allowed = min(self.connection_window, self.stream_window(stream_id), 16384)
            if allowed <= 0 and view:
                await self.until(
                    lambda: min(self.connection_window, self.stream_window(stream_id)) > 0
                )
                continue
            piece, view = view[:allowed], view[allowed:]
            self.connection_window -= len(piece)
            self.stream_windows[stream_id] = self.stream_window(stream_id) - len(piece)
            await self.send(data_frame(stream_id, piece, end=end and not view))
            if not view:
                return

    def stream_window(self, stream_id: int) -> int:
        initial = self.server_settings.get(INITIAL_WINDOW_SIZE, 65535)
        return self.stream_windows.setdefault(stream_id, initial)

    # -- reading -----------------------------------------------------------------------
    async def read_frame(self) -> Frame | None:
        """The server's next frame (handled: see the class docstring); ``None`` at EOF."""
        while True:
            if len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) >= 9 + length:
                    break
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.eof = True
                return None
            self.buffer += data
        head, body = bytes(self.buffer[:9]), bytes(self.buffer[9 : 9 + length])
        del self.buffer[: 9 + length]
        parsed, _ = Frame.parse_frame_header(memoryview(head))
        parsed.parse_body(memoryview(body))
        self.frames.append(parsed)
        await self._handle(parsed, length)
        return parsed

    async def until(self, done: Callable[[], bool]) -> None:
        """Read frames until ``done()``; fails at EOF or after ``patience`` seconds first."""
        with trio.fail_after(self.patience):
            while not done():
                if await self.read_frame() is None:
                    raise AssertionError("the server closed the connection first")

    async def response(self, stream_id: int) -> StreamResult:
        """Read until stream ``stream_id`` ended or was reset."""
        await self.until(lambda: self.result(stream_id).done)
        return self.result(stream_id)

    async def goaway(self) -> GoAway:
        """Read until the server's next GOAWAY (not yet returned by this method)."""
        seen = len(self.goaways)
        await self.until(lambda: len(self.goaways) > seen)
        return self.goaways[seen]

    async def closed(self) -> None:
        """Read until the server closes the connection (within ``patience`` seconds)."""
        with trio.fail_after(self.patience):
            while await self.read_frame() is not None:
                pass

    def result(self, stream_id: int) -> StreamResult:
        return self.streams.setdefault(stream_id, StreamResult())

    def kinds(self) -> list[str]:
        """The type names of the frames received so far (for failure messages)."""
        return [type(f).__name__ for f in self.frames]

    async def _handle(self, parsed: Frame, length: int) -> None:
        sid = parsed.stream_id
        if isinstance(parsed, HeadersFrame | ContinuationFrame):
            if isinstance(parsed, HeadersFrame):
                flags = END_STREAM if "END_STREAM" in parsed.flags else 0
                self._block = (sid, flags, bytearray())
            assert self._block is not None
            self._block[2].extend(parsed.data)
            if "END_HEADERS" in parsed.flags:
                stream_id, flags, block = self._block
                self._block = None
                fields = [
                    (bytes(n), bytes(v)) for n, v in self.decoder.decode(bytes(block), raw=True)
                ]
                result = self.result(stream_id)
                if result.headers is None or dict(result.headers)[b":status"].startswith(b"1"):
                    result.headers = fields
                else:
                    result.trailers = fields
                result.ended = result.ended or bool(flags & END_STREAM)
        elif isinstance(parsed, DataFrame):
            result = self.result(sid)
            result.body += parsed.data
            result.ended = result.ended or "END_STREAM" in parsed.flags
            if self.auto_window and length:
                updates = window_update(0, length)
                if not result.ended:
                    updates += window_update(sid, length)
                await self.send(updates)
        elif isinstance(parsed, RstStreamFrame):
            self.result(sid).reset = parsed.error_code
        elif isinstance(parsed, GoAwayFrame):
            self.goaways.append(
                GoAway(parsed.last_stream_id, parsed.error_code, bytes(parsed.additional_data))
            )
        elif isinstance(parsed, SettingsFrame):
            if "ACK" in parsed.flags:
                self.settings_acks += 1
            else:
                old = self.server_settings.get(INITIAL_WINDOW_SIZE, 65535)
                self.server_settings.update(parsed.settings)
                delta = self.server_settings.get(INITIAL_WINDOW_SIZE, 65535) - old
                for stream_id in self.stream_windows:
                    self.stream_windows[stream_id] += delta
                if self.auto_ack:
                    await self.send(settings_frame(ack=True))
        elif isinstance(parsed, PingFrame):
            if "ACK" in parsed.flags:
                self.ping_acks.append(bytes(parsed.opaque_data))
            else:
                self.pings.append(bytes(parsed.opaque_data))
                if self.auto_ack:
                    await self.send(ping(bytes(parsed.opaque_data), ack=True))
        elif isinstance(parsed, WindowUpdateFrame):
            self.window_updates.append((sid, parsed.window_increment))
            if sid == 0:
                self.connection_window += parsed.window_increment
            else:
                self.stream_windows[sid] = self.stream_window(sid) + parsed.window_increment


def request_fields(method: bytes, path: bytes, headers: Sequence[Header] = ()) -> list[Header]:
    """A well-formed request head: the four pseudo-header fields, then ``headers``."""
    return [
        (b":method", method),
        (b":scheme", b"http"),
        (b":authority", b"example.test"),
        (b":path", path),
        *headers,
    ]


class H2Client:
    """A well-behaved client on h2's client state machine (see the module docstring)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        config = h2.config.H2Configuration(
            client_side=True, header_encoding=None, validate_outbound_headers=False
        )
        self.h2 = h2.connection.H2Connection(config)
        self.responses: dict[int, StreamResult] = {}
        self.terminated: h2.events.ConnectionTerminated | None = None

    async def start(self) -> None:
        self.h2.initiate_connection()
        await self._flush()

    async def _flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            await self.stream.send_all(data)

    async def request(
        self, method: bytes = b"GET", path: bytes = b"/", body: bytes = b""
    ) -> StreamResult:
        """One request on a new stream; its whole response."""
        stream_id = self.h2.get_next_available_stream_id()
        headers = request_fields(
            method, path, [(b"content-length", b"%d" % len(body))] if body else []
        )
        self.h2.send_headers(stream_id, headers, end_stream=not body)
        result = self.responses.setdefault(stream_id, StreamResult())
        with trio.fail_after(600):
            view = memoryview(body)
            while view:  # the body as the server's windows allow
                size = min(
                    self.h2.local_flow_control_window(stream_id),
                    self.h2.max_outbound_frame_size,
                    len(view),
                )
                if size:
                    self.h2.send_data(stream_id, bytes(view[:size]), end_stream=size == len(view))
                    view = view[size:]
                    await self._flush()
                else:
                    await self._receive()
            await self._flush()
            while not result.done:
                await self._receive()
        return result

    async def _receive(self) -> None:
        data = await self.stream.receive_some(65536)
        assert data, "the server closed the connection"
        for event in self.h2.receive_data(data):
            self._event(event)
        await self._flush()

    def _event(self, event: Any) -> None:
        if isinstance(event, h2.events.ResponseReceived):
            self.responses[event.stream_id].headers = list(event.headers)
        elif isinstance(event, h2.events.DataReceived):
            self.responses[event.stream_id].body += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.responses[event.stream_id].ended = True
        elif isinstance(event, h2.events.StreamReset):
            self.responses[event.stream_id].reset = event.error_code
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.terminated = event


# -- the server ---------------------------------------------------------------------------
def h2_config(**changes: Any) -> ServerConfig:
    return ServerConfig(http2=True, **changes)


@asynccontextmanager
async def h2_server(
    router: Router, config: ServerConfig | None = None
) -> AsyncIterator[tuple[Server, trio.Nursery]]:
    """A server with HTTP/2 on; its connections are opened with ``connect`` (in memory)."""
    server = Server(router, ("127.0.0.1", 0), config or h2_config())
    async with trio.open_nursery() as nursery:
        yield server, nursery
        nursery.cancel_scope.cancel()


def memory_stream(server: Server, nursery: trio.Nursery) -> trio.abc.Stream:
    """An in-memory connection served by the real connection code; the client's end."""
    client, served = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle_stream, served, CLIENT)
    return client


async def connect(
    server: Server,
    nursery: trio.Nursery,
    settings: dict[int, int] | None = None,
    *,
    auto_ack: bool = True,
    auto_window: bool = True,
) -> RawPeer:
    """A ``RawPeer`` on a new in-memory connection, its preface and SETTINGS sent, the
    server's SETTINGS and connection WINDOW_UPDATE read, and our SETTINGS acknowledged."""
    peer = RawPeer(memory_stream(server, nursery), auto_ack=auto_ack, auto_window=auto_window)
    await peer.start(settings)
    await peer.until(lambda: peer.settings_acks > 0)  # after the server's SETTINGS and window
    return peer


async def well_behaved(server: Server, nursery: trio.Nursery) -> H2Client:
    client = H2Client(memory_stream(server, nursery))
    await client.start()
    return client


def connections(server: Server) -> list[HTTP2Connection]:
    """The server's open HTTP/2 connections."""
    state = server._state
    assert state is not None
    return [c for c in state.connections if isinstance(c, HTTP2Connection)]
