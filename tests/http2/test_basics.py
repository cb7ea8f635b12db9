"""Stream states and basics (RFC 9113 sections 5 and 8): requests on one connection, the
request as the app sees it, resets cancelling one handler, and the connection or stream
errors a client's protocol mistakes get."""

from __future__ import annotations

import json

import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    CANCEL,
    GOAWAY,
    HEADERS,
    PREFACE,
    PROTOCOL_ERROR,
    STREAM_CLOSED,
    RawPeer,
    connect,
    connections,
    data_frame,
    frame,
    h2_server,
    memory_stream,
    request_fields,
    rst_stream,
    settings_frame,
    well_behaved,
)


async def test_get_and_post_on_one_connection(autojump_clock: trio.testing.MockClock) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        client = await well_behaved(server, nursery)
        got = await client.request(b"GET", b"/")
        assert (got.status, bytes(got.body)) == (200, b"hello")
        posted = await client.request(b"POST", b"/echo", b"payload" * 1000)
        assert (posted.status, bytes(posted.body)) == (200, b"payload" * 1000)


async def test_interleaved_streams_each_get_their_own_body(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        streams = (1, 3, 5)
        for sid in streams:
            await peer.request(sid, b"POST", b"/echo", end=False)
        for round_ in range(3):  # DATA of the three streams, one frame each in turn
            for sid in streams:
                await peer.send(data_frame(sid, b"%d-%d;" % (sid, round_)))
        for sid in reversed(streams):
            await peer.send(data_frame(sid, b"", end=True))
        for sid in streams:
            result = await peer.response(sid)
            assert result.status == 200
            assert bytes(result.body) == b"".join(b"%d-%d;" % (sid, r) for r in range(3))
        assert peer.goaways == []


async def test_the_request_is_version_2_and_authority_becomes_host(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"PUT", b"/info?x=1", body=b"abc")
        info = json.loads((await peer.response(1)).body)
        assert info == {
            "version": "2",
            "method": "PUT",
            "target": "/info?x=1",
            "host": "example.test",
            "size": 3,
        }


async def test_a_client_reset_cancels_only_that_stream_s_handler(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")
        await peer.request(3, b"GET", b"/wait/b")
        await lab.started["a"].wait()
        await lab.started["b"].wait()
        await peer.send(rst_stream(1, CANCEL))
        await lab.finished["a"].wait()
        assert lab.cancelled == ["a"]
        lab.release("b")
        result = await peer.response(3)
        assert (result.status, bytes(result.body)) == (200, b"released b")
        assert lab.cancelled == ["a"]
        assert peer.result(1).headers is None  # nothing was sent on the reset stream
        assert peer.goaways == []


async def test_losing_the_connection_cancels_every_handler(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")
        await peer.request(3, b"POST", b"/wait/b", end=False)
        await lab.started["a"].wait()
        await lab.started["b"].wait()
        await peer.stream.aclose()
        await lab.finished["a"].wait()
        await lab.finished["b"].wait()
        assert sorted(lab.cancelled) == ["a", "b"]


async def test_headers_on_a_closed_stream_is_a_connection_error_stream_closed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # RFC 9113 section 5.1 ("closed"): a connection error of type STREAM_CLOSED.
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1)
        assert (await peer.response(1)).status == 200
        await peer.send(peer.headers_frame(1, request_fields(b"GET", b"/")))
        await peer.request(3)
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(1, STREAM_CLOSED)]
        assert 3 not in peer.streams  # after the GOAWAY: not served


async def test_data_on_a_closed_stream_is_a_stream_error_and_the_connection_goes_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1)
        assert (await peer.response(1)).status == 200
        await peer.send(data_frame(1, b"late", end=True))
        await peer.request(3)
        assert (await peer.response(3)).status == 200
        assert peer.result(1).reset == STREAM_CLOSED
        assert peer.goaways == []


async def test_data_after_the_client_reset_its_stream_is_answered_stream_closed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/wait/a", end=False)
        await lab.started["a"].wait()
        await peer.send(rst_stream(1, CANCEL), data_frame(1, b"late", end=True))
        await peer.request(3)
        assert (await peer.response(3)).status == 200
        assert peer.result(1).reset == STREAM_CLOSED
        assert lab.cancelled == ["a"]


async def test_data_on_a_stream_never_opened_is_a_connection_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(data_frame(5, b"abc", end=True))
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(0, PROTOCOL_ERROR)]


async def test_a_client_opening_an_even_stream_is_a_connection_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(frame(HEADERS, 0x5, 2, peer.block(request_fields(b"GET", b"/"))))
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(0, PROTOCOL_ERROR)]
        assert 2 not in peer.streams


async def test_a_stream_id_lower_than_one_already_opened_is_a_connection_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(5)
        assert (await peer.response(5)).status == 200
        await peer.request(3)
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(5, PROTOCOL_ERROR)]
        assert 3 not in peer.streams


async def test_a_connection_error_while_a_handler_runs_still_sends_its_goaway(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Regression: the stream's end used to reset it through h2 after h2 had closed the
    # connection; h2 raised, the connection's tasks crashed and the GOAWAY was never written.
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/wait/a", body=b"x" * 1000, end=False)
        await lab.started["a"].wait()
        await peer.send(data_frame(7, b"abc", end=True))  # a stream never opened
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(1, PROTOCOL_ERROR)]
        assert lab.cancelled == ["a"]


async def test_a_client_that_says_goaway_at_once_still_gets_the_server_preface(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Preface, SETTINGS and GOAWAY in one read: the server's SETTINGS (its connection
    preface, RFC 9113 section 3.4) and its acknowledgement still go out before it closes,
    and it sends no GOAWAY of its own (found by the HTTP/2 fuzzer: nothing was sent)."""
    async with h2_server(router(Lab())) as (server, nursery):
        peer = RawPeer(memory_stream(server, nursery))
        await peer.send(PREFACE + settings_frame() + frame(GOAWAY, 0, 0, bytes(8)))
        await peer.closed()
    assert peer.server_settings or peer.settings_acks, peer.kinds()
    assert peer.kinds()[:1] == ["SettingsFrame"]
    assert peer.goaways == []


async def test_an_idle_connection_holds_no_closed_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        client = await well_behaved(server, nursery)
        for _ in range(3):
            assert (await client.request(b"GET", b"/")).status == 200
        await trio.testing.wait_all_tasks_blocked()
        (connection,) = connections(server)
        assert connection.active == 0
        assert connection.adapter._h2.streams == {}  # h2's state of the three is gone
