"""The clients of bench/instructions_streams.py: HTTP/2 requests and WebSocket echoes.

Both keep their connections open between calls of ``run(count)``, which sends exactly
``count`` requests or messages, checks every answer and raises ``ServerFailed`` on a wrong
one, a closed connection or ``timeout`` seconds without an answer. Each sends the same
requests in the same pattern every time, so that the server under count does the same work.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from run import ECHO_BODY, Endpoint, ServerFailed

if TYPE_CHECKING:
    from h2.connection import H2Connection

MESSAGE = "0123456789abcdef"  # the WebSocket text message, 16 bytes
RECEIVE_SIZE = 64 * 1024


@dataclass
class H2Link:
    """One connection of ``H2Client`` and its responses under way, by stream."""

    sock: socket.socket
    conn: H2Connection
    responses: dict[int, tuple[int, str, bytearray]] = field(default_factory=dict)


class H2Client:
    """``connections`` h2c connections (prior knowledge) asking for ``endpoint`` (a POST
    carries ``ECHO_BODY`` in one DATA frame): each sends ``streams`` requests in one write,
    and its next ``streams`` in one write once all of them are answered. The client's
    ``SETTINGS_HEADER_TABLE_SIZE`` is ``header_table_size``: the room the server's HPACK
    encoder has for the fields it sends."""

    def __init__(
        self,
        port: int,
        endpoint: Endpoint,
        connections: int,
        streams: int,
        header_table_size: int,
        timeout: float,
    ) -> None:
        import h2.config
        import h2.connection
        from h2.settings import SettingCodes

        self.endpoint, self.streams, self.timeout = endpoint, streams, timeout
        self.headers = [
            (b":method", endpoint.method.encode()),
            (b":scheme", b"http"),
            (b":authority", f"127.0.0.1:{port}".encode()),
            (b":path", endpoint.path.encode()),
        ]
        self.body = ECHO_BODY if endpoint.method == "POST" else b""
        if self.body:
            self.headers += [
                (b"content-type", b"application/octet-stream"),
                (b"content-length", b"%d" % len(self.body)),
            ]
        self.selector = selectors.DefaultSelector()
        self.links: list[H2Link] = []
        try:
            for _ in range(connections):
                sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
                conn.initiate_connection()
                conn.update_settings({SettingCodes.HEADER_TABLE_SIZE: header_table_size})
                sock.sendall(conn.data_to_send())
                self.links.append(H2Link(sock, conn))
                self.selector.register(sock, selectors.EVENT_READ, self.links[-1])
        except BaseException:
            self.close()
            raise

    def send_batch(self, link: H2Link, count: int) -> int:
        """Send up to ``streams`` requests (at most ``count``) on ``link`` in one write, with
        what the connection owes (window updates, acknowledgements); how many it sent."""
        batch = min(self.streams, count)
        for _ in range(batch):
            stream_id = link.conn.get_next_available_stream_id()
            link.conn.send_headers(stream_id, self.headers, end_stream=not self.body)
            if self.body:
                link.conn.send_data(stream_id, self.body, end_stream=True)
            link.responses[stream_id] = (0, "", bytearray())
        if pending := link.conn.data_to_send():
            link.sock.sendall(pending)
        return batch

    def receive(self, link: H2Link, data: bytes) -> int:
        """Feed the server's bytes to ``link``; how many responses ended, each checked."""
        import h2.events

        ended = 0
        for event in link.conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                fields = dict(event.headers or [])
                status = int(fields.get(b":status", b"0"))
                ctype = fields.get(b"content-type", b"").decode("latin-1")
                link.responses[event.stream_id] = (status, ctype, bytearray())
            elif isinstance(event, h2.events.DataReceived):
                link.responses[event.stream_id][2].extend(event.data or b"")
                size = event.flow_controlled_length or 0
                link.conn.acknowledge_received_data(size, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                status, ctype, body = link.responses.pop(event.stream_id)
                if problem := self.endpoint.problem(status, ctype, bytes(body)):
                    ep = self.endpoint
                    raise ServerFailed(f"HTTP/2 {ep.method} {ep.path}: {problem}")
                ended += 1
            elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                raise ServerFailed(f"HTTP/2: {event!r}")
        return ended

    def run(self, count: int) -> None:
        sent = done = 0
        for link in self.links:
            sent += self.send_batch(link, count - sent)
        while done < count:
            ready = self.selector.select(self.timeout)
            if not ready:
                raise ServerFailed(f"HTTP/2: no data for {self.timeout:.0f} s ({done} done)")
            for key, _ in ready:
                link = key.data
                data = link.sock.recv(RECEIVE_SIZE)
                if not data:
                    raise ServerFailed(f"HTTP/2: the server closed a connection ({done} done)")
                done += self.receive(link, data)
                if not link.responses:
                    sent += self.send_batch(link, count - sent)
                elif pending := link.conn.data_to_send():
                    link.sock.sendall(pending)

    def close(self) -> None:
        self.selector.close()
        for link in self.links:
            with contextlib.suppress(OSError):
                link.conn.close_connection()
                link.sock.sendall(link.conn.data_to_send())
            link.sock.close()


class EchoClient:
    """``connections`` WebSocket connections to ``/`` (websockets' sync client; no compression,
    no pings of its own), taking turns: one sends a text message and reads its echo, then the
    next. One message is in flight at a time, so that the server reads each on its own."""

    def __init__(self, port: int, connections: int, timeout: float) -> None:
        from websockets.sync.client import connect

        self.timeout = timeout
        with contextlib.ExitStack() as opened:  # on an error, closes the ones already open
            self.sockets = [
                opened.enter_context(
                    connect(
                        f"ws://127.0.0.1:{port}/",
                        compression=None,
                        ping_interval=None,
                        open_timeout=timeout,
                        close_timeout=5,
                    )
                )
                for _ in range(connections)
            ]
            self.opened = opened.pop_all()

    def run(self, count: int) -> None:
        from websockets.exceptions import WebSocketException

        done = 0
        try:
            for done in range(count):
                ws = self.sockets[done % len(self.sockets)]
                ws.send(MESSAGE)
                if (echo := ws.recv(timeout=self.timeout)) != MESSAGE:
                    raise ServerFailed(f"WebSocket: echo {echo[:80]!r}, sent {MESSAGE!r}")
        except (WebSocketException, TimeoutError) as exc:
            raise ServerFailed(f"WebSocket after {done} echoes: {exc!r}") from exc

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.opened.close()
