"""Flow control (RFC 9113 sections 5.2 and 6.9): request bodies are buffered only as far as
the windows the server grants, which reopen as handlers read; a client that sends past them is
a FLOW_CONTROL_ERROR; responses go out as the client's windows allow, stream by stream."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    FLOW_CONTROL_ERROR,
    INITIAL_WINDOW_SIZE,
    RawPeer,
    connect,
    connections,
    h2_config,
    h2_server,
    ping,
    settings_frame,
    window_update,
)


async def settle(peer: RawPeer) -> None:
    """Let the server do everything it can, then read all it wrote (a PING round trip:
    the server answers PINGs in order, after what it had already queued)."""
    await trio.testing.wait_all_tasks_blocked()
    seen = len(peer.ping_acks)
    await peer.send(ping(b"settle!!"))
    await peer.until(lambda: len(peer.ping_acks) > seen)


def stream_updates(peer: RawPeer, stream_id: int) -> int:
    return sum(increment for sid, increment in peer.window_updates if sid == stream_id)


async def test_a_handler_that_never_reads_does_not_stall_other_streams(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/hold/a", end=False)
        await peer.upload(1, b"a" * 65536, end=False)  # its whole window, never read
        assert peer.stream_window(1) == 0
        for sid in (3, 5, 7):  # uploads larger than a stream window, on other streams
            await peer.request(sid, b"POST", b"/echo", end=False)
            await peer.upload(sid, b"%d" % sid * 100_000)
            result = await peer.response(sid)
            assert (result.status, len(result.body)) == (200, len(b"%d" % sid) * 100_000)
        assert not lab.finished["a"].is_set()
        await peer.upload(1, b"")  # the end of stream 1's body
        lab.release("a")
        assert bytes((await peer.response(1)).body) == b"held 65536"


async def test_the_stream_window_reopens_only_as_the_handler_reads(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/pace/a", end=False)
        await peer.upload(1, b"a" * 65536, end=False)
        await lab.started["a"].wait()
        await settle(peer)
        assert peer.stream_window(1) == 0
        assert stream_updates(peer, 1) == 0
        for chunks in (1, 2, 3, 4):  # one DATA frame read at a time: 16 KiB each
            lab.allow("a", 1)
            await settle(peer)
            assert lab.read["a"] == 16384 * chunks
            assert 0 < stream_updates(peer, 1) <= lab.read["a"]  # never ahead of the reads
        assert 65536 // 2 <= stream_updates(peer, 1) <= 65536  # h2 batches small updates
        await peer.upload(1, b"b" * 1000)
        lab.allow("a", 2)
        assert bytes((await peer.response(1)).body) == b"paced 66536"


@pytest.mark.parametrize("extra", [-1, 0, 1])
async def test_a_stream_buffers_at_most_its_window(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    window = 70_000
    lab = Lab()
    config = h2_config(http2_stream_window=window)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        assert peer.server_settings[INITIAL_WINDOW_SIZE] == window
        await peer.request(1, b"POST", b"/hold/a", end=False)
        await peer.send_body(1, b"a" * (window + extra), end=False)
        if extra > 0:
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [FLOW_CONTROL_ERROR]
            return
        await settle(peer)
        (connection,) = connections(server)
        assert connection.exchanges[1].buffered == window + extra
        await peer.send_body(1, b"")
        lab.release("a")
        assert bytes((await peer.response(1)).body) == b"held %d" % (window + extra)
        assert peer.goaways == []


@pytest.mark.parametrize("extra", [-1, 0, 1])
async def test_all_streams_together_buffer_at_most_the_connection_window(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    total = 100_000
    lab = Lab()
    config = h2_config(http2_connection_window=total)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        assert peer.connection_window == total
        await peer.request(1, b"POST", b"/hold/a", end=False)
        await peer.request(3, b"POST", b"/hold/b", end=False)
        await peer.send_body(1, b"a" * 65536, end=False)
        await peer.send_body(3, b"b" * (total - 65536 + extra), end=False)
        if extra > 0:
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [FLOW_CONTROL_ERROR]
            return
        await settle(peer)
        (connection,) = connections(server)
        assert sum(e.buffered for e in connection.exchanges.values()) == total + extra
        assert stream_updates(peer, 0) == total - 65535  # only the initial one
        await peer.send_body(1, b"")
        lab.release("a")  # stream 1's handler reads: the connection window reopens
        assert bytes((await peer.response(1)).body) == b"held 65536"
        await peer.until(lambda: stream_updates(peer, 0) > total - 65535)


async def test_the_response_head_goes_out_while_the_window_is_closed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Regression: the head was queued but the writer was not woken before the body waited
    # for the window, so a client that waits for the head before opening its window waited
    # until send_timeout.
    lab = Lab()
    async with h2_server(router(lab), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 0}, auto_window=False)
        await peer.request(1, b"GET", b"/late/a")
        await settle(peer)  # the server is idle: only the response can wake its writer
        lab.release("a")
        peer.patience = 10  # virtual seconds, far under send_timeout; the client sends nothing
        await peer.until(lambda: peer.result(1).headers is not None)
        assert peer.result(1).status == 200
        assert peer.result(1).body == b""


async def test_a_response_waits_for_a_closed_window_and_goes_out_as_it_opens(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 0}, auto_window=False)
        await peer.request(1, b"GET", b"/big/1000")
        await peer.until(lambda: peer.result(1).headers is not None)
        await settle(peer)
        assert peer.result(1).body == b""
        await peer.send(window_update(1, 300))
        await peer.until(lambda: len(peer.result(1).body) == 300)
        await settle(peer)
        assert len(peer.result(1).body) == 300
        await peer.send(window_update(1, 700))
        result = await peer.response(1)
        assert bytes(result.body) == b"x" * 1000


async def test_a_response_never_exceeds_a_small_window(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 100}, auto_window=False)
        await peer.request(1, b"GET", b"/big/1000")
        for sent in range(100, 1001, 100):
            await peer.until(lambda: len(peer.result(1).body) >= sent)  # noqa: B023
            await settle(peer)
            assert len(peer.result(1).body) == sent
            await peer.send(window_update(1, 100))
        assert peer.result(1).ended


async def test_a_stream_with_a_closed_window_does_not_block_another(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 0}, auto_window=False)
        await peer.send(window_update(0, 1_000_000))
        await peer.request(1, b"GET", b"/big/100000")
        await peer.request(3, b"GET", b"/big/100000")
        await peer.send(window_update(3, 100_000))
        result = await peer.response(3)
        assert len(result.body) == 100_000
        assert peer.result(1).body == b""
        await peer.send(window_update(1, 100_000))
        assert len((await peer.response(1)).body) == 100_000


async def test_the_connection_window_is_shared_by_the_streams(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 100_000}, auto_window=False)
        await peer.request(1, b"GET", b"/big/50000")
        await peer.request(3, b"GET", b"/big/50000")
        await peer.until(lambda: len(peer.result(1).body) + len(peer.result(3).body) == 65535)
        await settle(peer)  # the connection's 65535 bytes are spent: nothing more
        assert len(peer.result(1).body) + len(peer.result(3).body) == 65535
        await peer.send(window_update(0, 100_000 - 65535))
        assert len((await peer.response(1)).body) == 50000
        assert len((await peer.response(3)).body) == 50000


async def test_a_larger_initial_window_mid_response_applies_to_the_open_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 1000}, auto_window=False)
        await peer.send(window_update(0, 1_000_000))
        await peer.request(1, b"GET", b"/big/50000")
        await peer.until(lambda: len(peer.result(1).body) == 1000)
        await settle(peer)
        assert len(peer.result(1).body) == 1000
        await peer.send(settings_frame({INITIAL_WINDOW_SIZE: 50000}))  # no WINDOW_UPDATE
        assert len((await peer.response(1)).body) == 50000


async def test_a_smaller_initial_window_mid_response_makes_the_window_negative(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(send_timeout=1000)) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 10_000}, auto_window=False)
        await peer.send(window_update(0, 1_000_000))
        await peer.request(1, b"GET", b"/big/20000")
        await peer.until(lambda: len(peer.result(1).body) == 10_000)
        await peer.send(settings_frame({INITIAL_WINDOW_SIZE: 5_000}))  # window now -5000
        await peer.send(window_update(1, 5_000))  # back to 0: still nothing may be sent
        await settle(peer)
        assert len(peer.result(1).body) == 10_000
        await peer.send(window_update(1, 1_000))
        await peer.until(lambda: len(peer.result(1).body) == 11_000)
        await settle(peer)
        assert len(peer.result(1).body) == 11_000
        await peer.send(window_update(1, 9_000))
        assert len((await peer.response(1)).body) == 20_000
