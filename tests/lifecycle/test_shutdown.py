"""The ``Shutdown`` extractor and streams at graceful shutdown: an event stream ends cleanly
(HTTP/1.1 and HTTP/2), other streams keep going, long polls and WebSocket handlers see the
signal."""

from __future__ import annotations

import gzip
import subprocess
from collections.abc import AsyncIterator

import httpx
import pytest
import trio
import trio_websocket

from trioframe import Response, Router, ServerConfig, Shutdown, WebSocketConnection
from trioframe.middleware import CompressionMiddleware
from trioframe.testing import TestClient

from ..loopback._support import RawConnection, serving, simple_get

#: long enough that a test waiting for it would time out first (``fail_after`` below)
PATIENT = ServerConfig(shutdown_timeout=60)


class Events:
    """An endless event stream that records how it ended."""

    def __init__(self) -> None:
        self.streaming = trio.Event()
        self.closed = False

    async def stream(self) -> AsyncIterator[str]:
        try:
            yield "first"
            self.streaming.set()
            await trio.sleep_forever()
        finally:
            self.closed = True


def events_app(events: Events) -> Router:
    async def sse() -> Response:
        return Response.sse(events.stream())

    return Router().get("/events", sse)


# -- the extractor under TestClient --------------------------------------------------------------
async def test_shutdown_is_given_to_handlers_and_set_when_the_test_client_closes() -> None:
    seen: list[Shutdown] = []

    async def handler(shutdown: Shutdown) -> Response:
        seen.append(shutdown)
        return Response.json(shutdown.is_set())

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).json() is False
        assert not seen[0].is_set()
    assert seen[0].is_set()
    with trio.fail_after(1):
        await seen[0].wait()


async def test_a_websocket_handler_can_take_shutdown() -> None:
    async def handler(ws: WebSocketConnection, shutdown: Shutdown) -> None:
        await ws.send_text(f"shutting down: {shutdown.is_set()}")

    async with (
        TestClient(Router().websocket("/ws", handler)) as client,
        client.websocket("/ws") as ws,
    ):
        assert await ws.receive_text() == "shutting down: False"


# -- loopback ------------------------------------------------------------------------------------
@pytest.mark.loopback
async def test_an_event_stream_ends_with_the_last_chunk_at_shutdown_over_http1() -> None:
    events = Events()
    with trio.fail_after(10):
        async with serving(events_app(events), PATIENT) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/events"))
            await events.streaming.wait()
            served.server.shutdown()
            response = await connection.read_response()  # reads the chunked body to its end
            assert response.status == 200
            assert response.body == b"data: first\n\n"
            assert await connection.read_until_eof() == b""  # and the connection closes
            assert events.closed


@pytest.mark.loopback
async def test_an_event_stream_ends_cleanly_for_httpx_at_shutdown() -> None:
    events = Events()
    lines: list[str] = []
    with trio.fail_after(10):
        async with (
            serving(events_app(events), PATIENT) as served,
            httpx.AsyncClient() as client,
            client.stream("GET", f"{served.url}/events") as response,
        ):
            # A body cut short would raise httpx.RemoteProtocolError here.
            async for line in response.aiter_lines():
                lines.append(line)
                if line == "data: first":
                    await events.streaming.wait()
                    served.server.shutdown()
    assert lines == ["data: first", ""]
    assert events.closed


@pytest.mark.loopback
async def test_an_event_stream_ends_with_end_stream_at_shutdown_over_http2() -> None:
    # curl, not httpx: the h2 library httpx uses fails every stream in flight on GOAWAY.
    events = Events()
    with trio.fail_after(10):
        async with (
            serving(events_app(events), PATIENT.with_http2()) as served,
            trio.open_nursery() as nursery,
        ):
            done: list[subprocess.CompletedProcess[bytes]] = []

            async def curl() -> None:
                command = ["curl", "-sS", "-N", "--http2-prior-knowledge", f"{served.url}/events"]
                done.append(await trio.run_process(command, capture_stdout=True, check=False))

            nursery.start_soon(curl)
            await events.streaming.wait()  # curl has the first event
            served.server.shutdown()
    [result] = done
    # 0: the stream ended with END_STREAM (a reset would be exit status 92, a cut body 18)
    assert (result.returncode, result.stdout) == (0, b"data: first\n\n")
    assert events.closed


@pytest.mark.loopback
async def test_other_streams_keep_going_after_shutdown_begins() -> None:
    more = trio.Event()

    async def chunks() -> AsyncIterator[str]:
        yield "before "
        await more.wait()
        yield "after"

    async def download() -> Response:
        return Response.stream(chunks(), "text/plain")

    with trio.fail_after(10):
        async with serving(Router().get("/download", download), PATIENT) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/download"))
            await connection.receive_some()  # the head and the first chunk
            served.server.shutdown()
            more.set()
            response = await connection.read_response()
            assert response.body == b"before after"


@pytest.mark.loopback
async def test_a_long_poll_answers_when_shutdown_begins() -> None:
    polling = trio.Event()

    async def poll(shutdown: Shutdown) -> Response:
        polling.set()
        await shutdown.wait()
        return Response.json({"events": []})

    with trio.fail_after(10):
        async with serving(Router().get("/poll", poll), PATIENT) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/poll"))
            await polling.wait()
            served.server.shutdown()
            response = await connection.read_response()
            assert (response.status, response.json()) == (200, {"events": []})


@pytest.mark.loopback
async def test_a_websocket_handler_sees_the_shutdown_signal() -> None:
    saw_shutdown = trio.Event()

    async def handler(ws: WebSocketConnection, shutdown: Shutdown) -> None:
        await ws.send_text("ready")
        await shutdown.wait()
        saw_shutdown.set()

    with trio.fail_after(10):
        async with serving(Router().websocket("/ws", handler), PATIENT) as served:
            url = f"ws://{served.host}:{served.port}/ws"
            async with trio_websocket.open_websocket_url(url) as ws:
                assert await ws.get_message() == "ready"
                served.server.shutdown()
                await saw_shutdown.wait()


def events_app_with(make: str, events: Events) -> Router:
    """The event stream made another way: ``Response.stream`` with the event-stream media
    type, or ``Response.sse`` gzipped by ``CompressionMiddleware``."""

    async def frames() -> AsyncIterator[bytes]:
        async for event in events.stream():
            yield b"data: " + event.encode() + b"\n\n"

    async def streamed() -> Response:
        return Response.stream(frames(), content_type="text/event-stream; charset=utf-8")

    if make == "stream":
        return Router().get("/events", streamed)
    return events_app(events).middleware(CompressionMiddleware(minimum_size=1))


@pytest.mark.parametrize("make", ["stream", "gzipped"])
async def test_an_event_stream_made_another_way_ends_at_shutdown_too(make: str) -> None:
    """What ends at shutdown is the body's kind (an event stream), which a stream with that
    media type has and which compression keeps."""
    events = Events()
    with trio.fail_after(10):
        async with serving(events_app_with(make, events), PATIENT) as served:
            connection = await RawConnection.open(served.host, served.port)
            request = simple_get("/events").replace(
                b"\r\n\r\n", b"\r\nAccept-Encoding: gzip\r\n\r\n", 1
            )
            await connection.send(request)
            await events.streaming.wait()
            served.server.shutdown()
            response = await connection.read_response()
            assert response.status == 200
            body = gzip.decompress(response.body) if make == "gzipped" else response.body
            assert body == b"data: first\n\n"
            assert await connection.read_until_eof() == b""
            assert events.closed
