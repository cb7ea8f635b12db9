"""Limits, each at N-1, N and N+1, and timeouts, on one HTTP/2 connection: what goes over
answers its stream (REFUSED_STREAM, 413, 431, 408) or ends the connection (GOAWAY) as the
limit's documentation says; what stays within is served."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, hello, router
from tests.http2.support import (
    CANCEL,
    CONTINUATION,
    END_HEADERS,
    ENHANCE_YOUR_CALM,
    FRAME_SIZE_ERROR,
    HEADERS,
    INITIAL_WINDOW_SIZE,
    NO_ERROR,
    PROTOCOL_ERROR,
    REFUSED_STREAM,
    Header,
    RawPeer,
    connect,
    data_frame,
    frame,
    h2_config,
    h2_server,
    request_fields,
    rst_stream,
    well_behaved,
)
from trioframe import Request, Response, Router
from trioframe._chain import Next

LIMITS = [-1, 0, 1]


def list_size(fields: list[Header]) -> int:
    """A header list's size as SETTINGS_MAX_HEADER_LIST_SIZE counts it."""
    return sum(len(name) + len(value) + 32 for name, value in fields)


def head_of_size(size: int) -> list[Header]:
    fields = request_fields(b"GET", b"/")
    pad = size - list_size(fields) - len(b"x-pad") - 32
    return [*fields, (b"x-pad", b"a" * pad)]


async def served(peer: RawPeer, stream_id: int) -> None:
    await peer.request(stream_id)
    assert (await peer.response(stream_id)).status == 200


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_concurrent_streams(extra: int, autojump_clock: trio.testing.MockClock) -> None:
    limit = 3
    lab = Lab()
    config = h2_config(max_concurrent_streams=limit)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        assert peer.server_settings[0x3] == limit
        count = limit + extra
        ids = [2 * i + 1 for i in range(count)]
        for i, sid in enumerate(ids):
            await peer.request(sid, b"GET", b"/wait/%d" % i)
        if extra > 0:
            assert (await peer.response(ids[-1])).reset == REFUSED_STREAM
        for i in range(min(count, limit)):
            await lab.started[str(i)].wait()
            lab.release(str(i))
        for sid in ids[:limit]:
            assert (await peer.response(sid)).status == 200
        await served(peer, ids[-1] + 2)  # the slots are free again
        assert peer.goaways == []


async def test_a_reset_stream_counts_until_its_handler_returns(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lab = Lab()
    config = h2_config(max_concurrent_streams=2, cancel_on_disconnect=False)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")
        await peer.request(3, b"GET", b"/wait/b")
        await lab.started["a"].wait()
        await peer.send(rst_stream(1))  # its handler goes on (cancel_on_disconnect=False)
        await peer.request(5, b"GET", b"/wait/c")
        assert (await peer.response(5)).reset == REFUSED_STREAM
        lab.release("a")
        await lab.finished["a"].wait()
        await peer.request(7, b"GET", b"/wait/d")
        await lab.started["d"].wait()
        lab.release("b")
        lab.release("d")
        assert (await peer.response(3)).status == 200
        assert (await peer.response(7)).status == 200
        assert lab.cancelled == []


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_header_list_size(extra: int, autojump_clock: trio.testing.MockClock) -> None:
    limit = 1000
    config = h2_config(http2_max_header_list_size=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        assert peer.server_settings[0x6] == limit
        await peer.send(peer.headers_frame(1, head_of_size(limit + extra)))
        result = await peer.response(1)
        assert result.status == (431 if extra > 0 else 200)
        await served(peer, 3)


@pytest.mark.parametrize("extra", LIMITS)
async def test_a_header_list_over_twice_the_limit_ends_the_connection(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    limit = 1000
    config = h2_config(http2_max_header_list_size=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        await served(peer, 1)
        await peer.send(peer.headers_frame(3, head_of_size(2 * limit + extra)))
        if extra > 0:
            await peer.closed()
            assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
                (1, ENHANCE_YOUR_CALM)
            ]
            return
        assert (await peer.response(3)).status == 431
        await served(peer, 5)


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_header_count(extra: int, autojump_clock: trio.testing.MockClock) -> None:
    limit = 5
    async with h2_server(router(Lab()), h2_config(max_header_count=limit)) as (server, nursery):
        peer = await connect(server, nursery)
        # Host (from :authority) counts as a field, as it does over HTTP/1.1, and the
        # cookie fields count as one, however many
        fields = [(b"x-%d" % i, b"v") for i in range(limit + extra - 2)]
        fields.append((b"cookie", b"a=1"))
        fields += [(b"cookie", b"b=2"), (b"cookie", b"c=3")]
        await peer.request(1, headers=fields)
        assert (await peer.response(1)).status == (431 if extra > 0 else 200)
        await served(peer, 3)


def continued(peer: RawPeer, stream_id: int, continuations: int) -> bytes:
    """A request head in one HEADERS frame and ``continuations`` CONTINUATION frames."""
    block = peer.block(request_fields(b"GET", b"/", [(b"x-pad", b"p" * 100)]))
    size = max(1, len(block) // (continuations + 1))
    pieces = [block[i * size : (i + 1) * size] for i in range(continuations)]
    pieces.append(block[continuations * size :])
    assert all(pieces)
    out = frame(HEADERS, 0x1, stream_id, pieces[0])
    for i, piece in enumerate(pieces[1:], 1):
        out += frame(CONTINUATION, END_HEADERS if i == continuations else 0, stream_id, piece)
    return out


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_continuation_frames(extra: int, autojump_clock: trio.testing.MockClock) -> None:
    limit = 3
    config = h2_config(http2_max_continuation_frames=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(continued(peer, 1, limit + extra))
        if extra > 0:
            await peer.closed()
            assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
                (0, ENHANCE_YOUR_CALM)
            ]
            return
        assert (await peer.response(1)).status == 200
        await served(peer, 3)


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_body_size(extra: int, autojump_clock: trio.testing.MockClock) -> None:
    limit = 1000
    async with h2_server(router(Lab()), h2_config(max_body_size=limit)) as (server, nursery):
        peer = await connect(server, nursery)
        body = b"b" * (limit + extra)
        await peer.request(1, b"POST", b"/echo", body=body)  # no Content-Length
        declared = [(b"content-length", b"%d" % len(body))]
        await peer.request(3, b"POST", b"/echo", declared, body=body)
        for sid in (1, 3):
            result = await peer.response(sid)
            if extra > 0:
                assert result.status == 413
                assert b"max_body_size" in result.body
            else:
                assert (result.status, bytes(result.body)) == (200, body)
        await served(peer, 5)
        assert peer.goaways == []


@pytest.mark.parametrize("extra", LIMITS)
async def test_max_requests_per_connection(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    limit = 3
    config = h2_config(max_requests_per_connection=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        ids = [2 * i + 1 for i in range(limit + extra)]
        for sid in ids:
            await peer.request(sid)
        for sid in ids[:limit]:
            assert (await peer.response(sid)).status == 200
        if extra < 0:
            await served(peer, ids[-1] + 2)  # the last request allowed
            ids.append(ids[-1] + 2)
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(5, NO_ERROR)]
        if extra > 0:
            assert peer.result(7).headers is None  # past the GOAWAY's last stream


@pytest.mark.parametrize("extra", LIMITS)
async def test_a_frame_over_the_max_frame_size_is_refused_from_its_header(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    # The server announces no SETTINGS_MAX_FRAME_SIZE: the protocol's 16384 holds. A larger
    # frame ends the connection as soon as its 9-byte header arrives, its payload never
    # read nor buffered (h2 alone would wait for the whole payload, up to 16 MiB, first).
    size = 16384 + extra
    async with h2_server(router(Lab()), h2_config()) as (server, nursery):
        good = await well_behaved(server, nursery)
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/info", end=False)
        payload = b"x" * size
        if extra > 0:
            await peer.send(data_frame(1, payload)[:9])  # the header alone
            await peer.closed()
            assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [
                (1, FRAME_SIZE_ERROR)
            ]
            assert b"16385 bytes" in peer.goaways[0].debug
        else:
            await peer.send(data_frame(1, payload, end=True))
            assert b'"size":%d' % size in (await peer.response(1)).body
            await served(peer, 3)
        assert (await good.request()).status == 200


async def test_header_timeout_for_a_header_block_never_finished(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = h2_config(header_timeout=5, keep_alive_timeout=100)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        await served(peer, 1)
        start = trio.current_time()
        block = peer.block(request_fields(b"GET", b"/"))
        await peer.send(frame(HEADERS, 0x1, 3, block[:5]))  # no END_HEADERS, no CONTINUATION
        await peer.closed()
        assert trio.current_time() - start == pytest.approx(5)
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(1, PROTOCOL_ERROR)]


async def test_header_timeout_for_a_connection_that_sends_no_request(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = h2_config(header_timeout=5, keep_alive_timeout=100)
    async with h2_server(router(Lab()), config) as (server, nursery):
        start = trio.current_time()
        peer = await connect(server, nursery)
        await peer.closed()
        assert trio.current_time() - start == pytest.approx(5)
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(0, NO_ERROR)]


async def test_keep_alive_timeout_closes_an_idle_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = h2_config(keep_alive_timeout=3, header_timeout=100)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        for sid in (1, 3):  # each idle period is under the limit
            await served(peer, sid)
            await trio.sleep(2.9)
        await served(peer, 5)
        start = trio.current_time()
        goaway = await peer.goaway()
        assert trio.current_time() - start == pytest.approx(3)
        assert (goaway.last_stream_id, goaway.error_code) == (5, NO_ERROR)
        await peer.closed()


async def test_keep_alive_timeout_starts_when_the_last_stream_ends(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The client sends nothing after its request (no WINDOW_UPDATE for the response): the
    # reader was already waiting when the stream ended, and the idle connection still
    # closes keep_alive_timeout after it.
    config = h2_config(keep_alive_timeout=3, header_timeout=100)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery, auto_window=False)
        await served(peer, 1)
        start = trio.current_time()
        goaway = await peer.goaway()
        assert trio.current_time() - start == pytest.approx(3)
        assert (goaway.last_stream_id, goaway.error_code) == (1, NO_ERROR)
        await peer.closed()


async def test_body_timeout_answers_408_on_the_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab()), h2_config(body_timeout=4)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/echo", body=b"some", end=False)  # then nothing
        start = trio.current_time()
        result = await peer.response(1)
        assert trio.current_time() - start == pytest.approx(4)
        assert result.status == 408
        await served(peer, 3)
        assert peer.goaways == []


@pytest.mark.parametrize("extra", LIMITS)
async def test_min_body_rate_on_a_stream(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    # As on HTTP/1.1 (tests/server/test_timeouts.py): waiting for the body may take
    # body_timeout plus a second for every min_body_rate bytes received. At 9 bytes a second
    # for a rate of 10, the 22nd chunk is 0.05 s too late.
    rate = 10
    per_second = rate + extra
    config = h2_config(body_timeout=2.05, min_body_rate=rate)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        start = trio.current_time()
        await peer.request(1, b"POST", b"/echo", body=b"x" * per_second, end=False)
        for chunk in range(1, 30):
            with trio.move_on_after(1):  # read what comes while the second passes
                await peer.until(lambda: peer.result(1).done)
            if peer.result(1).done:
                break
            await peer.send_body(1, b"x" * per_second, end=chunk == 29)
        result = await peer.response(1)
        if extra < 0:
            assert result.status == 408
            assert trio.current_time() - start == pytest.approx(20.95)
            assert b"request body too slow" in result.body
        else:
            assert result.status == 200 and len(result.body) == 30 * per_second
        await served(peer, 3)  # the connection goes on


async def test_own_timeout_around_a_body_read_does_not_leave_the_body_timeout_armed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A handler that stops waiting for the body (its own move_on_after) and then works longer
    # than body_timeout is answered by itself, not 408: it no longer waits for the body.
    async def patient(request: Request, next_: Next) -> Response:  # (before the extractors)
        with trio.move_on_after(1):
            await request.body_reader()
        await trio.sleep(10)  # other work, longer than body_timeout
        return Response.text("answered without the body")

    app = Router().middleware(patient).post("/", hello)
    async with h2_server(app, h2_config(body_timeout=4)) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/", end=False)  # the body stalls
        result = await peer.response(1)
        assert (result.status, bytes(result.body)) == (200, b"answered without the body")


async def test_the_408_to_a_head_request_has_no_body(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The server's own error answer to a HEAD gives the error body's length, never the body
    # (as on HTTP/1.1).
    async def read(request: Request) -> Response:
        await request.read_body()
        return Response.text("never")

    async with h2_server(Router().head("/echo", read), h2_config(body_timeout=4)) as (
        server,
        nursery,
    ):
        peer = await connect(server, nursery)
        await peer.request(1, b"HEAD", b"/echo", body=b"some", end=False)  # then nothing
        result = await peer.response(1)
        assert result.status == 408 and result.ended
        assert dict(result.headers or [])[b"content-length"] == b"75"
        assert bytes(result.body) == b""


async def test_send_timeout_for_a_client_that_never_opens_its_window(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = h2_config(send_timeout=5)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery, {INITIAL_WINDOW_SIZE: 0}, auto_window=False)
        await peer.request(1, b"GET", b"/big/1000")
        start = trio.current_time()
        result = await peer.response(1)
        assert trio.current_time() - start == pytest.approx(5)
        assert result.status == 200  # the head went out, the body never could
        assert result.body == b""
        assert result.reset == CANCEL  # the server cancelled it: not an internal error
        await peer.request(3, b"GET", b"/")  # an empty body needs no window
        assert (await peer.response(3)).status == 200
        assert peer.goaways == []


async def test_a_stream_opened_and_reset_after_the_final_goaway_is_ignored(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Regression: the server refused the late stream through h2 after h2 had already seen
    # its RST_STREAM (same read); h2 raised and the whole connection crashed, its GOAWAY and
    # the response in flight lost.
    lab = Lab()
    config = h2_config(max_requests_per_connection=1)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")
        await lab.started["a"].wait()
        late = peer.headers_frame(3, request_fields(b"GET", b"/"))
        await peer.send(late + rst_stream(3))  # one read: h2 closes stream 3 first
        lab.release("a")
        assert (await peer.response(1)).status == 200
        await peer.closed()
        assert [(g.last_stream_id, g.error_code) for g in peer.goaways] == [(1, NO_ERROR)]
        assert peer.result(3).headers is None
