"""Floods (the flood account of ``http2_frames.FrameMeter``): frames and resets that do no
work, past ``http2_flood_allowance`` + 2 x the work done, end the connection with
GOAWAY(ENHANCE_YOUR_CALM) while a well-behaved connection beside it is served; and a client
that floods without reading cannot make the server queue without bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    CLIENT,
    CONTINUATION,
    ENHANCE_YOUR_CALM,
    HEADERS,
    NO_ERROR,
    PREFACE,
    REFUSED_STREAM,
    RawPeer,
    connect,
    connections,
    data_frame,
    frame,
    h2_config,
    h2_server,
    ping,
    priority,
    request_fields,
    rst_stream,
    settings_frame,
    well_behaved,
    window_update,
)

ALLOWANCE = 20
LIMITS = [-1, 0, 1]


def ping_frames(peer: RawPeer, count: int) -> bytes:
    return b"".join(ping(b"%08d" % i) for i in range(count))


def settings_frames(peer: RawPeer, count: int) -> bytes:
    return settings_frame({0x4: 65535}) * count


def settings_acks(peer: RawPeer, count: int) -> bytes:
    return settings_frame(ack=True) * count  # unsolicited: the server expects none


def empty_data(peer: RawPeer, count: int) -> bytes:
    head = peer.headers_frame(1, request_fields(b"POST", b"/wait/x"), end_stream=False)
    return head + data_frame(1, b"") * count


def window_updates(peer: RawPeer, count: int) -> bytes:
    return window_update(0, 1) * count


def priorities(peer: RawPeer, count: int) -> bytes:
    return b"".join(priority(2 * i + 101) for i in range(count))


def unknown_frames(peer: RawPeer, count: int) -> bytes:
    return frame(0x20, 0, 0, b"extension") * count


def rapid_resets(peer: RawPeer, count: int) -> bytes:  # CVE-2023-44487
    return b"".join(
        peer.headers_frame(2 * i + 1, request_fields(b"GET", b"/wait/%d" % i))
        + rst_stream(2 * i + 1)
        for i in range(count)
    )


def refused_heads(peer: RawPeer, count: int) -> bytes:  # CVE-2025-8671: the server resets
    fields = request_fields(b"GET", b"/", [(b"content-length", b"x")])
    return b"".join(peer.headers_frame(2 * i + 1, fields) for i in range(count))


def heads_answered_400(peer: RawPeer, count: int) -> bytes:  # the server must answer them
    fields = request_fields(b"GET", b"/", [(b"Upper-Case", b"x")])
    return b"".join(peer.headers_frame(2 * i + 1, fields) for i in range(count))


def trailers_twice(peer: RawPeer, count: int) -> bytes:  # CVE-2025-8671: h2 resets
    return b"".join(
        peer.headers_frame(2 * i + 1, request_fields(b"GET", b"/wait/%d" % i))
        + peer.headers_frame(2 * i + 1, [(b"x-trailer", b"1")])  # after END_STREAM
        for i in range(count)
    )


def data_on_a_closed_stream(peer: RawPeer, count: int) -> bytes:  # each answered RST_STREAM
    head = peer.headers_frame(1, request_fields(b"POST", b"/wait/x"), end_stream=False)
    return head + rst_stream(1) + data_frame(1, b"x") * (count - 1)


def headers_on_a_reset_stream(peer: RawPeer, count: int) -> bytes:  # each answered RST_STREAM
    head = peer.headers_frame(1, request_fields(b"POST", b"/wait/x"), end_stream=False)
    trailers = [peer.headers_frame(1, [(b"x-trailer", b"%d" % i)]) for i in range(count - 1)]
    return head + rst_stream(1) + b"".join(trailers)


FLOODS: dict[str, Callable[[RawPeer, int], bytes]] = {
    "PING": ping_frames,
    "SETTINGS": settings_frames,
    "SETTINGS ACK": settings_acks,
    "empty DATA": empty_data,
    "WINDOW_UPDATE": window_updates,
    "PRIORITY": priorities,
    "unknown frame type": unknown_frames,
    "rapid reset": rapid_resets,
    "heads the server resets": refused_heads,
    "heads the server answers 400": heads_answered_400,
    "frames h2 resets the stream for": trailers_twice,
    "DATA on a closed stream": data_on_a_closed_stream,
    "HEADERS on a reset stream": headers_on_a_reset_stream,
}


@pytest.mark.parametrize("kind", list(FLOODS))
async def test_a_flood_ends_its_connection_only(
    kind: str, autojump_clock: trio.testing.MockClock
) -> None:
    lab = Lab()
    config = h2_config(http2_flood_allowance=ALLOWANCE)
    async with h2_server(router(lab), config) as (server, nursery):
        good = await well_behaved(server, nursery)
        assert (await good.request()).status == 200
        peer = await connect(server, nursery)
        await peer.send(FLOODS[kind](peer, 10 * ALLOWANCE))
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
        assert b"flood" in peer.goaways[0].debug
        assert len(lab.started) <= ALLOWANCE + 1  # the flood stopped early
        for _ in range(3):
            assert (await good.request(b"POST", b"/echo", b"fine")).body == b"fine"
        assert good.terminated is None


@pytest.mark.parametrize(
    "kind", ["PING", "WINDOW_UPDATE", "rapid reset", "trailers", "DATA on a closed stream"]
)
@pytest.mark.parametrize("extra", LIMITS)
async def test_the_flood_allowance(
    kind: str, extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    build = FLOODS["frames h2 resets the stream for" if kind == "trailers" else kind]
    config = h2_config(http2_flood_allowance=ALLOWANCE)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(build(peer, ALLOWANCE + extra))
        await peer.send(ping(b"lastping"))  # one more frame that does no work
        if extra >= 0:
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
            return
        await peer.until(lambda: b"lastping" in peer.ping_acks)
        await peer.request(1001, b"GET", b"/")
        assert (await peer.response(1001)).status == 200
        assert peer.goaways == []


@pytest.mark.parametrize("extra", LIMITS)
async def test_streams_opened_after_the_goaway_count_as_overhead(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    # After max_requests_per_connection the server announces GOAWAY; a client that goes on
    # opening streams has each one refused, and each refusal is overhead like any other.
    lab = Lab()
    config = h2_config(http2_flood_allowance=ALLOWANCE, max_requests_per_connection=1)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait/a")  # the last request: GOAWAY(1)
        assert (await peer.goaway()).last_stream_id == 1
        late = request_fields(b"GET", b"/wait/late")
        await peer.send(
            b"".join(peer.headers_frame(2 * i + 3, late) for i in range(ALLOWANCE + extra))
        )
        await peer.send(ping(b"lastping"))  # one more frame that does no work
        if extra >= 0:
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [NO_ERROR, ENHANCE_YOUR_CALM]
        else:
            await peer.until(lambda: b"lastping" in peer.ping_acks)
            assert peer.result(2 * (ALLOWANCE + extra) + 1).reset == REFUSED_STREAM
            lab.release("a")
            assert (await peer.response(1)).status == 200
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [NO_ERROR]
        assert "late" not in lab.started
        other = await connect(server, nursery)  # a new connection is served
        await other.request(1, b"GET", b"/")
        assert (await other.response(1)).status == 200


@pytest.mark.parametrize("extra", LIMITS)
async def test_work_done_raises_the_allowance_by_twice_its_amount(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    config = h2_config(http2_flood_allowance=ALLOWANCE)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery, auto_window=False)
        await peer.request(1, b"GET", b"/big/40000")  # 3 DATA frames and a response: 4 work
        assert len((await peer.response(1)).body) == 40000
        await peer.send(ping_frames(peer, ALLOWANCE + 2 * 4 + extra))
        if extra > 0:
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
            return
        await peer.until(lambda: len(peer.ping_acks) == ALLOWANCE + 8 + extra)
        assert peer.goaways == []


@pytest.mark.parametrize("extra", LIMITS)
async def test_a_continuation_flood_ends_the_connection(
    extra: int, autojump_clock: trio.testing.MockClock
) -> None:
    # CVE-2024-27316: a header block that never ends, one small CONTINUATION at a time.
    config = h2_config(http2_max_continuation_frames=16)
    async with h2_server(router(Lab()), config) as (server, nursery):
        good = await well_behaved(server, nursery)
        peer = await connect(server, nursery)
        block = peer.block(request_fields(b"GET", b"/", [(b"x-pad", b"p" * 40)]))
        pieces = [block[:1]] + [block[i : i + 1] for i in range(1, len(block))]
        assert len(pieces) > 17
        head = pieces[: 16 + extra]  # a HEADERS frame and 15 + extra CONTINUATIONs
        flood = frame(HEADERS, 0x1, 1, head[0])
        flood += b"".join(frame(CONTINUATION, 0, 1, piece) for piece in head[1:])
        await peer.send(flood)
        await peer.send(frame(CONTINUATION, 0x4, 1, b"".join(pieces[16 + extra :])))
        if extra > 0:  # 16 + extra CONTINUATION frames in all
            await peer.closed()
            assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
            assert (await good.request()).status == 200
            return
        assert (await peer.response(1)).status == 200
        assert (await good.request()).status == 200


async def test_a_header_block_too_large_is_cut_off_before_it_is_decoded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limit = 4096  # the block may take at most 2 x 4096 bytes
    config = h2_config(http2_max_header_list_size=limit)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        junk = b"\x00" * 3000  # never decoded: the account stops it first
        await peer.send(frame(HEADERS, 0x1, 1, junk), frame(CONTINUATION, 0, 1, junk))
        await peer.send(frame(CONTINUATION, 0, 1, junk))  # 9000 > 8192
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]


async def test_a_client_that_floods_pings_and_never_reads_is_bounded_and_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bound, send_timeout = 16 * 1024, 7.0
    config = h2_config(
        http2_flood_allowance=10**9,  # not the flood account: the output bound stops it
        http2_max_output_buffer=bound,
        send_timeout=send_timeout,
    )
    server_end: trio.abc.Stream
    client_end, server_end = trio.testing.lockstep_stream_pair()
    async with h2_server(router(Lab()), config) as (server, nursery):
        closed = trio.Event()

        async def serve() -> None:
            await server.handle_stream(server_end, CLIENT)
            closed.set()

        sent = 0

        async def flood() -> None:  # never reads
            nonlocal sent
            await client_end.send_all(PREFACE + settings_frame())
            chunk = ping_frames(RawPeer(client_end), 1000)
            try:
                while True:
                    await client_end.send_all(chunk)
                    sent += 1000
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

        start = trio.current_time()
        nursery.start_soon(serve)
        nursery.start_soon(flood)
        await trio.testing.wait_all_tasks_blocked()
        (connection,) = connections(server)
        assert connection.adapter.pending <= bound + 65536  # at most one read past the bound
        assert sent * 17 <= bound + 2 * 65536  # the server stopped reading PINGs
        await closed.wait()
        assert trio.current_time() - start == pytest.approx(send_timeout)


async def test_one_byte_of_unread_data_does_not_pay_for_a_reset(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Body earns flood credit only once a handler reads it: HEADERS + 1 byte of DATA +
    # RST_STREAM is a rapid reset like any other (it used to pass as work).
    lab = Lab()
    config = h2_config(http2_flood_allowance=ALLOWANCE, max_requests_per_connection=1000)
    async with h2_server(router(lab), config) as (server, nursery):
        peer = await connect(server, nursery)
        for i in range(60):
            sid = 2 * i + 1
            head = peer.headers_frame(
                sid, request_fields(b"POST", b"/wait/%d" % i), end_stream=False
            )
            await peer.send(head, data_frame(sid, b"x"), rst_stream(sid))
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
        assert len(lab.started) <= ALLOWANCE + 1


async def test_answers_to_malformed_heads_earn_no_credit(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # One malformed head at a time, each answered 400 before the next. If the 400s counted as
    # work (a response and a DATA frame each), every one would pay for its own refusal and
    # the loop would never end; as it is, the refusals add up to a flood.
    config = h2_config(http2_flood_allowance=ALLOWANCE)
    async with h2_server(router(Lab()), config) as (server, nursery):
        peer = await connect(server, nursery)
        fields = request_fields(b"GET", b"/", [(b"Upper-Case", b"x")])
        answered = 0
        for i in range(10 * ALLOWANCE):
            await peer.send(peer.headers_frame(2 * i + 1, fields))
            try:
                assert (await peer.response(2 * i + 1)).status == 400
            except AssertionError:  # the server closed the connection first
                break
            answered += 1
        await peer.closed()
        assert [g.error_code for g in peer.goaways] == [ENHANCE_YOUR_CALM]
        assert answered <= ALLOWANCE
