"""Graceful shutdown that reaches an HTTP/2 connection while it is closing (its client has
just gone, its task is closing the stream) must be a no-op for that connection, never an
error that ends ``serve()``. Found by the loopback TLS test with httpx: the client closed
its connection just before the server shut down."""

from __future__ import annotations

import trio
import trio.testing

from trioframe import Response, Router, Server
from trioframe._server.http2.connection import HTTP2Connection

from ._support import h2_config


async def hello() -> Response:
    return Response.text("hello")


class _ClosingSlowly(trio.abc.Stream):
    """A stream whose client is gone (EOF) and whose ``aclose`` waits, shielded, until the
    test lets it finish: the connection's task is held in its closing phase."""

    def __init__(self) -> None:
        self.closing = trio.Event()
        self.may_close = trio.Event()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        return b""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self.closing.set()
        with trio.CancelScope(shield=True):
            await self.may_close.wait()


async def test_begin_shutdown_on_a_connection_that_is_closing_does_nothing() -> None:
    server = Server(Router().get("/", hello), ("127.0.0.1", 0), h2_config())
    stream = _ClosingSlowly()
    connection = HTTP2Connection(server._prepare(), stream, ("127.0.0.1", 40000))
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.run)
            try:
                await stream.closing.wait()  # run() is past its nursery, closing the stream
                connection.begin_shutdown()  # what the server's drain does: must not raise
                connection.evict("the server is at its connection limit")
                connection.cancel_for_shutdown()
            finally:
                stream.may_close.set()
