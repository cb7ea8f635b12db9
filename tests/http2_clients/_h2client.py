"""A minimal raw HTTP/2 client over any trio stream (h2's client side), for the tests
that need what httpx does not expose: a body that stalls, a client that stops opening its
flow-control windows, frames seen one by one."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import h2.config
import h2.connection
import h2.events
import trio

__all__ = ["RawH2Client", "StreamState"]

Header = tuple[bytes, bytes]


@attrs.define
class StreamState:
    """What arrived on one stream so far."""

    status: int | None = None
    headers: list[Header] = attrs.Factory(list)
    body: bytearray = attrs.Factory(bytearray)
    #: DATA frames received with a payload, in order
    frames: list[bytes] = attrs.Factory(list)
    ended: bool = False
    reset_code: int | None = None

    @property
    def over(self) -> bool:
        return self.ended or self.reset_code is not None

    def header(self, name: bytes) -> bytes | None:
        return next((value for key, value in self.headers if key == name), None)


class RawH2Client:
    """The client side of one HTTP/2 connection. ``open_windows``: give back every
    received DATA byte to both flow-control windows at once (off: the stream windows stay
    as the server filled them; the connection window is made large at the start)."""

    def __init__(self, stream: trio.abc.Stream, *, open_windows: bool = True) -> None:
        self.stream = stream
        self.open_windows = open_windows
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config)
        self.streams: dict[int, StreamState] = {}
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.eof = False

    async def start(self) -> None:
        """Send the preface and SETTINGS (and, without ``open_windows``, a 16 MiB
        connection window)."""
        self.h2.initiate_connection()
        if not self.open_windows:
            self.h2.increment_flow_control_window(16 * 1024 * 1024)
        await self.flush()

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            await self.stream.send_all(data)

    async def request(
        self,
        method: bytes,
        path: bytes,
        headers: list[Header] | None = None,
        *,
        end: bool = True,
    ) -> int:
        """Open a stream with a request head; its id."""
        stream_id: int = self.h2.get_next_available_stream_id()
        fields = [(b":method", method), (b":scheme", b"http"), (b":authority", b"test")]
        fields += [(b":path", path), *(headers or [])]
        self.h2.send_headers(stream_id, fields, end_stream=end)
        self.streams[stream_id] = StreamState()
        await self.flush()
        return stream_id

    async def send_data(self, stream_id: int, data: bytes, *, end: bool = False) -> None:
        self.h2.send_data(stream_id, data, end_stream=end)
        await self.flush()

    async def open_window(self, stream_id: int, size: int) -> None:
        """Open the stream's receive window by ``size`` bytes."""
        self.h2.increment_flow_control_window(size, stream_id)
        await self.flush()

    async def receive(self) -> None:
        """Read once from the connection and record what it carried (``EOFError`` at its
        end)."""
        try:
            data = await self.stream.receive_some(65536)
        except trio.BrokenResourceError:
            data = b""
        if not data:
            self.eof = True
            raise EOFError("the server closed the connection")
        for event in self.h2.receive_data(data):
            self._record(event)
        await self.flush()

    async def until(self, condition: Callable[[], bool]) -> None:
        """Read until ``condition()`` holds."""
        while not condition():
            await self.receive()

    async def response(self, stream_id: int) -> StreamState:
        """Read until the stream is over (ended or reset); what it got."""
        state = self.streams[stream_id]
        await self.until(lambda: state.over)
        return state

    def _record(self, event: object) -> None:
        if isinstance(event, h2.events.ResponseReceived):
            state = self.streams[event.stream_id]
            for name, value in event.headers:
                if name == b":status":
                    state.status = int(value)
                else:
                    state.headers.append((name, value))
        elif isinstance(event, h2.events.DataReceived):
            state = self.streams[event.stream_id]
            state.body += event.data
            if event.data:
                state.frames.append(event.data)
            if self.open_windows and event.flow_controlled_length:
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.streams[event.stream_id].ended = True
        elif isinstance(event, h2.events.StreamReset):
            self.streams[event.stream_id].reset_code = int(event.error_code)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event
