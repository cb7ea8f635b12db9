"""The same behaviours over real loopback sockets (``server.serve``): requests, a malformed
head, a flood beside a well-behaved connection, graceful shutdown."""

from __future__ import annotations

import trio

from tests.http2.lab import Lab, router
from tests.http2.support import (
    ENHANCE_YOUR_CALM,
    LAST_STREAM_ID,
    H2Client,
    RawPeer,
    h2_config,
    ping,
    request_fields,
)
from trioframe import Server, ServerConfig

PATIENCE = 10.0  # real seconds: every wait below takes milliseconds


async def open_peer(address: tuple[str, int], **options: bool) -> RawPeer:
    peer = RawPeer(await trio.open_tcp_stream(*address), **options)
    peer.patience = PATIENCE
    await peer.start()
    await peer.until(lambda: peer.settings_acks > 0)
    return peer


async def open_client(address: tuple[str, int]) -> H2Client:
    client = H2Client(await trio.open_tcp_stream(*address))
    await client.start()
    return client


async def serving(
    nursery: trio.Nursery, lab: Lab, config: ServerConfig | None = None
) -> tuple[Server, tuple[str, int]]:
    server = Server(router(lab), ("127.0.0.1", 0), config or h2_config())
    addresses = await nursery.start(server.serve)
    return server, addresses[0]


async def test_requests_and_a_malformed_head_over_tcp() -> None:
    async with trio.open_nursery() as nursery:
        _, address = await serving(nursery, Lab())
        with trio.fail_after(PATIENCE):
            client = await open_client(address)
            assert bytes((await client.request()).body) == b"hello"
            posted = await client.request(b"POST", b"/echo", b"z" * 200_000)
            assert bytes(posted.body) == b"z" * 200_000
        peer = await open_peer(address)
        await peer.send(peer.headers_frame(1, request_fields(b"GET", b"/", [(b"Up", b"1")])))
        assert (await peer.response(1)).status == 400
        await peer.request(3, b"GET", b"/info")
        assert b'"version":"2"' in (await peer.response(3)).body
        nursery.cancel_scope.cancel()


async def test_a_ping_flood_over_tcp_ends_only_its_connection() -> None:
    async with trio.open_nursery() as nursery:
        _, address = await serving(nursery, Lab(), h2_config(http2_flood_allowance=50))
        with trio.fail_after(PATIENCE):
            client = await open_client(address)
            assert (await client.request()).status == 200
        peer = await open_peer(address)
        await peer.send(ping() * 500)
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
        with trio.fail_after(PATIENCE):
            assert (await client.request()).status == 200
        nursery.cancel_scope.cancel()


async def test_graceful_shutdown_over_tcp() -> None:
    lab = Lab()
    async with trio.open_nursery() as nursery:
        server, address = await serving(nursery, lab)
        peer = await open_peer(address)
        await peer.request(1, b"GET", b"/wait/a")
        with trio.fail_after(PATIENCE):
            await lab.started["a"].wait()
        server.shutdown()
        assert (await peer.goaway()).last_stream_id == LAST_STREAM_ID
        assert (await peer.goaway()).last_stream_id == 1
        await peer.send(ping(b"stillok!"))  # the connection still reads
        await peer.until(lambda: b"stillok!" in peer.ping_acks)
        lab.release("a")
        assert bytes((await peer.response(1)).body) == b"released a"
        await peer.closed()
    # serve() returned by itself once the connection had closed
