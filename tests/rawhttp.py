"""Raw HTTP/1.1 over in-memory streams to the real server connection code.

For tests that must send bytes no well-behaved client would (smuggling, broken heads,
slow clients) and check the exact bytes that come back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import h11
import trio
import trio.testing

from trioframe import Router, Server, ServerConfig


class RawConnection:
    """The client end of one in-memory connection."""

    def __init__(self, stream: trio.testing.MemoryStreamPair | trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = b""

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)  # type: ignore[union-attr]

    async def close_write(self) -> None:
        await self.stream.aclose()  # type: ignore[union-attr]

    async def read_until_closed(self) -> bytes:
        """Everything the server sends until it closes the connection."""
        while chunk := await self.stream.receive_some():  # type: ignore[union-attr]
            self.buffer += chunk
        data, self.buffer = self.buffer, b""
        return data

    async def is_closed(self) -> bool:
        """True when the server has closed its side (reads EOF with nothing pending)."""
        chunk = await self.stream.receive_some()  # type: ignore[union-attr]
        self.buffer += chunk
        return chunk == b""

    async def response(self) -> h11.Response | h11.InformationalResponse:
        """The next response head (body kept in ``self.body``) parsed with h11."""
        responses = await self.responses(1)
        return responses[0]

    async def responses(self, count: int) -> list[h11.Response]:
        """Parse ``count`` complete responses; bodies go to ``self.bodies``."""
        client = h11.Connection(h11.CLIENT)
        # h11 needs to have "sent" requests to parse responses to them.
        out: list[h11.Response] = []
        self.bodies: list[bytes] = []
        for _ in range(count):
            client.send(h11.Request(method="GET", target="/", headers=[("host", "t")]))
            client.send(h11.EndOfMessage())
            body = b""
            head: h11.Response | None = None
            while True:
                event = client.next_event()
                if event is h11.NEED_DATA:
                    if self.buffer:
                        client.receive_data(self.buffer)
                        self.buffer = b""
                    else:
                        client.receive_data(await self.stream.receive_some())  # type: ignore[union-attr]
                    continue
                if isinstance(event, h11.Response):
                    head = event
                elif isinstance(event, h11.Data):
                    body += bytes(event.data)
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
            assert head is not None
            out.append(head)
            self.bodies.append(body)
            self.body = body
            if client.our_state is h11.MUST_CLOSE or client.their_state is h11.MUST_CLOSE:
                trailing = client.trailing_data[0]
                self.buffer = trailing + self.buffer
                break
            self.buffer = client.trailing_data[0] + self.buffer
            client = h11.Connection(h11.CLIENT)
        return out


@asynccontextmanager
async def raw_server(
    router: Router, config: ServerConfig | None = None
) -> AsyncIterator[tuple[Server, trio.Nursery]]:
    """A server whose connections are opened with :func:`connect`."""
    server = Server(router, ("127.0.0.1", 0), config)
    async with trio.open_nursery() as nursery:
        yield server, nursery
        nursery.cancel_scope.cancel()


def connect(server: Server, nursery: trio.Nursery) -> RawConnection:
    """Open an in-memory connection served by the real connection code."""
    client, served = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle_stream, served, ("127.0.0.1", 40000))
    return RawConnection(client)


def status_of(raw: bytes) -> int:
    """The status code of a raw response."""
    return int(raw.split(b" ", 2)[1])
