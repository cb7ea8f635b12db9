"""``Request.cancelled_by``: why the server cancelled a handler, as the handler (or a
middleware around it) sees it when ``trio.Cancelled`` arrives, over HTTP/1.1 and HTTP/2."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from tests.http2.support import CANCEL, connect, h2_config, h2_server, rst_stream
from tests.rawhttp import connect as connect_h1
from tests.rawhttp import raw_server, status_of
from trioframe import Next, Request, Response, Router, ServerConfig
from trioframe.middleware import TimeoutMiddleware
from trioframe.testing import TestClient


class Watch:
    """A middleware that records ``cancelled_by`` when a cancellation passes through it, and
    its routes: ``GET /wait`` waits until cancelled, ``POST /read`` reads the body first."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = trio.Event()
        self.causes: list[str | None] = []

    async def __call__(self, request: Request, next: Next) -> Response:
        self.started.set()
        try:
            return await next(request)
        except trio.Cancelled:
            self.causes.append(request.cancelled_by)
            self.cancelled.set()
            raise

    def router(self) -> Router:
        return Router().middleware(self).get("/wait", wait).post("/read", read)


async def wait() -> str:
    await trio.sleep_forever()
    return "never"


async def read(request: Request) -> str:  # the body is read before this runs
    return "read"


async def test_a_client_gone_over_http1_is_a_disconnect(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = Watch()
    async with raw_server(watch.router()) as (server, nursery):
        conn = connect_h1(server, nursery)
        await conn.send(b"GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        await watch.started.wait()
        await conn.close_write()
        await watch.cancelled.wait()
    assert watch.causes == ["disconnect"]


async def test_an_http2_stream_reset_is_a_stream_reset(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = Watch()
    async with h2_server(watch.router()) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait")
        await watch.started.wait()
        await peer.send(rst_stream(1, CANCEL))
        await watch.cancelled.wait()
    assert watch.causes == ["stream_reset"]


async def test_a_lost_http2_connection_is_a_disconnect(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = Watch()
    async with h2_server(watch.router()) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait")
        await watch.started.wait()
        await peer.stream.aclose()  # the connection is lost
        await watch.cancelled.wait()
    assert watch.causes == ["disconnect"]


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
async def test_the_end_of_the_grace_period_is_shutdown(
    http2: bool, autojump_clock: trio.testing.MockClock
) -> None:
    watch = Watch()
    config = h2_config(shutdown_timeout=5) if http2 else ServerConfig(shutdown_timeout=5)
    async with h2_server(watch.router(), config) as (server, nursery):
        await nursery.start(server.serve)
        if http2:
            peer = await connect(server, nursery)
            await peer.request(1, b"GET", b"/wait")
            await watch.started.wait()
            server.shutdown()
            assert (await peer.response(1)).status == 503
        else:
            conn = connect_h1(server, nursery)
            await conn.send(b"GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
            await watch.started.wait()
            server.shutdown()
            assert status_of(await conn.read_until_closed()) == 503
    assert watch.causes == ["shutdown"]


async def test_a_stalled_body_is_a_body_timeout(autojump_clock: trio.testing.MockClock) -> None:
    watch = Watch()
    async with raw_server(watch.router(), ServerConfig(body_timeout=4.0)) as (server, nursery):
        conn = connect_h1(server, nursery)
        await conn.send(b"POST /read HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        raw = await conn.read_until_closed()
    assert status_of(raw) == 408
    assert watch.causes == ["body_timeout"]


async def test_a_timeout_middleware_deadline_is_a_deadline() -> None:
    seen: list[str | None] = []

    async def outer(request: Request, next: Next) -> Response:
        response = await next(request)
        seen.append(request.cancelled_by)
        return response

    router = Router().middleware(outer).middleware(TimeoutMiddleware(0.05)).get("/wait", wait)
    async with TestClient(router) as client:
        response = await client.get("/wait")
    assert response.status_code == 503
    assert json.loads(response.content)["status"] == 503
    assert seen == ["deadline"]


async def test_a_request_served_normally_has_no_cause() -> None:
    seen: list[str | None] = []

    async def handler(request: Request) -> str:
        seen.append(request.cancelled_by)
        return "ok"

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).text == "ok"
    assert seen == [None]
    assert Request.__new__(Request).cancelled_by is None  # a request no server serves
