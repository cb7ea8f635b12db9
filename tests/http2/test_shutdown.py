"""Graceful shutdown of HTTP/2 connections (RFC 9113 section 6.8): GOAWAY with the highest
stream id and a PING, then, a PING round trip later, GOAWAY with the last stream received;
streams in flight finish; after ``shutdown_timeout`` what is left is cancelled (503 when its
response has not started); then the connection closes."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing
from hyperframe.frame import GoAwayFrame, HeadersFrame, PingFrame

from tests.http2.lab import Lab, router
from tests.http2.support import (
    CANCEL,
    LAST_STREAM_ID,
    NO_ERROR,
    REFUSED_STREAM,
    connect,
    h2_config,
    h2_server,
    ping,
)

SHUTDOWN_PING = b"goaway\x00\x00"


async def test_two_goaways_around_a_ping_and_the_stream_in_flight_finishes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")
        await lab.started["a"].wait()
        mark = len(peer.frames)
        server.shutdown()
        first = await peer.goaway()
        assert (first.last_stream_id, first.error_code) == (LAST_STREAM_ID, NO_ERROR)
        second = await peer.goaway()  # the PING was acknowledged (auto_ack)
        assert (second.last_stream_id, second.error_code) == (1, NO_ERROR)
        assert SHUTDOWN_PING in peer.pings
        kinds = [type(f) for f in peer.frames[mark:]]
        assert kinds == [GoAwayFrame, PingFrame, GoAwayFrame]
        assert peer.result(1).headers is None
        lab.release("a")
        result = await peer.response(1)
        assert (result.status, bytes(result.body)) == (200, b"released a")
        await peer.closed()
        assert lab.cancelled == []


async def test_a_stream_opened_between_the_two_goaways_is_served(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery, auto_ack=False)
        await peer.request(1, b"GET", b"/wait/a")
        await lab.started["a"].wait()
        server.shutdown()
        assert (await peer.goaway()).last_stream_id == LAST_STREAM_ID
        await peer.until(lambda: SHUTDOWN_PING in peer.pings)
        await peer.request(3, b"GET", b"/")  # sent before the PING's answer: in time
        await peer.send(ping(SHUTDOWN_PING, ack=True))
        assert (await peer.goaway()).last_stream_id == 3
        assert (await peer.response(3)).status == 200
        await peer.request(5, b"GET", b"/")  # after the final GOAWAY: refused
        assert (await peer.response(5)).reset == REFUSED_STREAM
        lab.release("a")
        assert (await peer.response(1)).status == 200
        await peer.closed()


async def test_a_client_that_never_answers_the_ping_gets_the_second_goaway_after_a_second(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    async with h2_server(router(lab)) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery, auto_ack=False)
        await peer.request(1, b"GET", b"/wait/a")
        await lab.started["a"].wait()
        server.shutdown()
        await peer.goaway()
        start = trio.current_time()
        assert (await peer.goaway()).last_stream_id == 1
        assert trio.current_time() - start == pytest.approx(1.0)
        lab.release("a")
        assert (await peer.response(1)).status == 200
        await peer.closed()


async def test_an_idle_connection_closes_after_the_two_goaways(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery)
        await peer.request(1)
        assert (await peer.response(1)).status == 200
        server.shutdown()
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
            (LAST_STREAM_ID, NO_ERROR),
            (1, NO_ERROR),
        ]


async def test_after_shutdown_timeout_handlers_are_cancelled_and_answered_503(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    config = h2_config(shutdown_timeout=5)
    async with h2_server(router(lab), config) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")  # no response yet
        await peer.request(3, b"GET", b"/drip/b")  # a response begun
        await lab.started["a"].wait()
        await peer.until(lambda: peer.result(3).body == bytearray(b"first"))
        start = trio.current_time()
        server.shutdown()
        result = await peer.response(1)
        assert trio.current_time() - start == pytest.approx(5)
        assert result.status == 503
        assert json.loads(result.body)["status"] == 503
        dripped = await peer.response(3)
        assert (dripped.reset, dripped.ended) == (CANCEL, False)
        await peer.closed()
        assert sorted(lab.cancelled) == ["a", "b"]
        assert peer.goaways[-1].last_stream_id == 3
        assert any(isinstance(f, HeadersFrame) for f in peer.frames)
