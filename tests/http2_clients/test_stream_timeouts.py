"""``body_timeout`` and ``send_timeout`` on an HTTP/2 stream: a client that stalls its
request body gets 408 on that stream, a client that stops opening a stream's window loses
that stream; the connection's other streams go on. A raw h2 client over memory streams, on
trio's mock clock (virtual time: N-1, N and N+1 are exact)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing
from h2.errors import ErrorCodes

from trioframe import Body, Response, Router, Server, ServerConfig

from ._h2client import RawH2Client, StreamState

BODY_TIMEOUT = 5.0
SEND_TIMEOUT = 7.0
BIG = bytes(range(256)) * 4096  # 1 MiB: sixteen times the client's initial stream window


async def size(body: Body) -> Response:
    return Response.json({"size": len(body)})


async def big() -> Response:
    return Response(200, BIG, [(b"content-type", b"application/octet-stream")])


async def hello() -> Response:
    return Response.text("hello")


ROUTER = Router().post("/size", size).get("/big", big).get("/hello", hello)


@asynccontextmanager
async def connected(
    *, open_windows: bool = True, output_buffer: int = 64 * 1024
) -> AsyncIterator[RawH2Client]:
    config = ServerConfig(
        http2=True,
        body_timeout=BODY_TIMEOUT,
        send_timeout=SEND_TIMEOUT,
        http2_max_output_buffer=output_buffer,
    )
    server = Server(ROUTER, ("127.0.0.1", 0), config)
    client_end, server_end = trio.testing.memory_stream_pair()
    # virtual time: a test that waits for what never comes fails at once instead of hanging
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.handle_stream, server_end, ("127.0.0.1", 40000))
            client = RawH2Client(client_end, open_windows=open_windows)
            await client.start()
            yield client
            nursery.cancel_scope.cancel()


def error_body_of(state: StreamState, status: int) -> None:
    """The stream carried the standard JSON error body for ``status``."""
    assert state.status == status
    assert state.header(b"content-type") == b"application/json"
    body = json.loads(bytes(state.body))
    assert body["status"] == status and body["error"] == "Request Timeout"
    assert isinstance(body["message"], str)


# -- body_timeout ------------------------------------------------------------------------------
@pytest.mark.parametrize("stall", [BODY_TIMEOUT - 1, BODY_TIMEOUT - 0.01])
async def test_a_stall_shorter_than_body_timeout_is_fine(
    autojump_clock: trio.testing.MockClock, stall: float
) -> None:
    async with connected() as client:
        stream_id = await client.request(b"POST", b"/size", end=False)
        await client.send_data(stream_id, b"a" * 10)
        await trio.sleep(stall)  # virtual time: the client is silent this long
        await client.send_data(stream_id, b"b" * 10, end=True)
        state = await client.response(stream_id)
    assert state.status == 200 and json.loads(bytes(state.body)) == {"size": 20}


async def test_a_stalled_body_is_408_on_its_stream_and_the_others_go_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with connected() as client:
        stalled = await client.request(b"POST", b"/size", end=False)
        await client.send_data(stalled, b"a" * 10)
        started = trio.current_time()
        state = await client.response(stalled)
        waited = trio.current_time() - started
        other = await client.response(await client.request(b"GET", b"/hello"))
    assert waited == pytest.approx(BODY_TIMEOUT)
    error_body_of(state, 408)
    assert state.ended  # the 408 ended the stream from the server's side ...
    assert state.reset_code == ErrorCodes.NO_ERROR  # ... and the unread request was reset
    assert other.status == 200 and bytes(other.body) == b"hello"
    assert client.goaway is None


async def test_a_body_that_resumes_after_body_timeout_is_too_late(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with connected() as client:
        stream_id = await client.request(b"POST", b"/size", end=False)
        await client.send_data(stream_id, b"a" * 10)
        await trio.sleep(BODY_TIMEOUT + 1)
        state = client.streams[stream_id]
        await client.until(lambda: state.over)
    error_body_of(state, 408)


# -- send_timeout -------------------------------------------------------------------------------
#: An output buffer larger than the window (the wait is for the window alone) and the default
#: one, which the first window's worth fills (the wait is for the writer, then the window).
OUTPUT_BUFFERS = pytest.mark.parametrize(
    "output_buffer", [256 * 1024, 64 * 1024], ids=["window only", "window and queue"]
)


@OUTPUT_BUFFERS
async def test_a_stream_whose_window_stays_shut_is_reset_after_send_timeout(
    autojump_clock: trio.testing.MockClock, output_buffer: int
) -> None:
    async with connected(open_windows=False, output_buffer=output_buffer) as client:
        stuck = await client.request(b"GET", b"/big")
        state = client.streams[stuck]
        await client.until(lambda: len(state.body) == 65535)  # the initial window, full
        started = trio.current_time()
        await client.until(lambda: state.over)
        waited = trio.current_time() - started
        other = await client.request(b"GET", b"/hello")
        await client.open_window(other, 65535)
        answered = await client.response(other)
    assert waited == pytest.approx(SEND_TIMEOUT)
    assert state.status == 200 and not state.ended
    assert state.reset_code == ErrorCodes.CANCEL  # the server cancelled the response
    assert answered.status == 200 and bytes(answered.body) == b"hello"
    assert client.goaway is None


@OUTPUT_BUFFERS
@pytest.mark.parametrize("shut", [SEND_TIMEOUT - 1, SEND_TIMEOUT - 0.01])
async def test_a_window_opened_within_send_timeout_gets_the_whole_body(
    autojump_clock: trio.testing.MockClock, shut: float, output_buffer: int
) -> None:
    async with connected(open_windows=False, output_buffer=output_buffer) as client:
        stream_id = await client.request(b"GET", b"/big")
        state = client.streams[stream_id]
        await client.until(lambda: len(state.body) == 65535)
        with trio.move_on_after(shut):  # the window stays shut this long
            await client.until(lambda: state.over)
        assert not state.over
        await client.open_window(stream_id, len(BIG))
        await client.response(stream_id)
    assert state.ended and state.reset_code is None
    assert bytes(state.body) == BIG
