"""LoggerMiddleware: one access line per request, errors and cancellation included."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator

import pytest
import trio
import trio.testing

from tests.rawhttp import connect, raw_server
from trioframe import Next, Path, Request, Response, Router
from trioframe.middleware import LoggerMiddleware, RequestIdMiddleware, TimeoutMiddleware
from trioframe.testing import TestClient

ACCESS = "trioframe.access"


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=ACCESS)
    return caplog


def lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == ACCESS]


async def slow_hello() -> Response:
    await trio.sleep(0.25)
    return Response.text("hello")


async def boom() -> Response:
    raise RuntimeError("boom")


async def chunks() -> AsyncIterator[bytes]:
    yield b"a"


async def streamed() -> Response:
    return Response.stream(chunks())


def app() -> Router:
    return (
        Router()
        .middleware(LoggerMiddleware())
        .get("/hello", slow_hello)
        .get("/boom", boom)
        .get("/stream", streamed)
    )


async def test_one_line_with_every_field(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    async with TestClient(app(), client=("10.0.0.7", 4321)) as client:
        await client.get("/hello?token=secret")
    [record] = lines(access)
    assert record.levelno == logging.INFO
    assert record.getMessage() == '10.0.0.7:4321 "GET /hello" 200 5 250.0ms -'
    assert record.__dict__["client"] == "10.0.0.7:4321"
    assert (record.__dict__["method"], record.__dict__["path"]) == ("GET", "/hello")
    assert (record.__dict__["status"], record.__dict__["bytes"]) == (200, 5)
    assert record.__dict__["duration_ms"] == 250.0
    assert record.__dict__["request_id"] is None


async def test_errors_streams_and_head_are_logged(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    async with TestClient(app()) as client:
        sizes = [len((await client.get(path)).content) for path in ("/boom", "/missing")]
        await client.get("/stream")
        await client.head("/stream")
        sizes.append(len((await client.post("/hello")).content))
    messages = [r.getMessage().rsplit(" ", 2)[0] for r in lines(access)]
    assert messages == [
        f'127.0.0.1:50000 "GET /boom" 500 {sizes[0]}',
        f'127.0.0.1:50000 "GET /missing" 404 {sizes[1]}',
        '127.0.0.1:50000 "GET /stream" 200 -',
        '127.0.0.1:50000 "HEAD /stream" 200 -',
        f'127.0.0.1:50000 "POST /hello" 405 {sizes[2]}',
    ]


async def test_head_of_a_plain_body_logs_zero_bytes(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    async with TestClient(app()) as client:
        await client.head("/hello")
    [record] = lines(access)
    assert record.__dict__["bytes"] == 0


async def test_request_id_from_the_extension_or_the_response_header(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    async def tagged() -> Response:
        return Response.text("x").with_header("x-request-id", "from-handler")

    with_mw = Router().middleware(LoggerMiddleware()).middleware(RequestIdMiddleware())
    without = Router().middleware(LoggerMiddleware())
    async with TestClient(with_mw.get("/", slow_hello)) as client:
        await client.get("/", headers={"x-request-id": "abcdefgh-1"})
    async with TestClient(without.get("/", tagged)) as client:
        await client.get("/")
    first, second = lines(access)
    assert first.getMessage().endswith(" abcdefgh-1")
    assert first.__dict__["request_id"] == "abcdefgh-1"
    assert second.__dict__["request_id"] == "from-handler"


async def test_a_cancelled_request_is_logged_as_cancelled(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    router = (
        Router()
        .middleware(TimeoutMiddleware(0.1))
        .middleware(LoggerMiddleware())
        .get("/", slow_hello)
    )
    async with TestClient(router) as client:
        response = await client.get("/")
    assert response.status_code == 503
    [record] = lines(access)
    assert record.getMessage() == '127.0.0.1:50000 "GET /" cancelled - 100.0ms -'
    assert record.__dict__["status"] is None


async def test_a_cancelled_nursery_in_the_handler_is_logged_too(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    async def fan_out() -> Response:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep_forever)
            await trio.sleep_forever()
        return Response.text("never")

    router = (
        Router().middleware(TimeoutMiddleware(1)).middleware(LoggerMiddleware()).get("/", fan_out)
    )
    async with TestClient(router) as client:
        assert (await client.get("/")).status_code == 503
    [record] = lines(access)
    assert record.getMessage() == '127.0.0.1:50000 "GET /" cancelled - 1000.0ms -'


async def test_custom_logger_and_level(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    logger = logging.getLogger("myapp.access")
    caplog.set_level(logging.DEBUG, logger="myapp.access")
    router = Router().middleware(LoggerMiddleware(logger, logging.DEBUG)).get("/", slow_hello)
    async with TestClient(router) as client:
        await client.get("/")
    [record] = [r for r in caplog.records if r.name == "myapp.access"]
    assert record.levelno == logging.DEBUG


async def test_nothing_is_logged_when_the_level_is_disabled(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    caplog.set_level(logging.WARNING, logger=ACCESS)
    async with TestClient(app()) as client:
        assert (await client.get("/boom")).status_code == 500
    assert lines(caplog) == []


async def get_user(user_id: Path[int]) -> str:
    return f"user {user_id}"


def json_app() -> Router:
    return (
        Router()
        .middleware(LoggerMiddleware(format="json"))
        .middleware(RequestIdMiddleware())
        .get("/users/{user_id}", get_user)
        .get("/stream", streamed)
    )


async def test_a_json_line_per_request(
    access: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    async with TestClient(json_app(), client=("10.0.0.7", 4321)) as client:
        await client.get(
            "/users/42?token=secret",
            headers={"traceparent": traceparent},
        )
        await client.get("/missing")
        await client.get(
            "/stream", headers={"traceparent": "00-" + "0" * 32 + "-00f067aa0ba902b7-01"}
        )
    first, missing, stream = (json.loads(r.getMessage()) for r in lines(access))
    stamp = first.pop("time")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    assert re.fullmatch(r"[0-9a-f]{32}", first.pop("request_id"))  # RequestIdMiddleware's
    assert first == {
        "method": "GET",
        "path": "/users/42",
        "route": "/users/{user_id}",
        "status": 200,
        "duration_ms": 0.0,
        "client": "10.0.0.7:4321",
        "bytes": 7,
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
    }
    assert (missing["route"], missing["status"], missing["path"]) == (None, 404, "/missing")
    assert "trace_id" not in stream  # an all-zero trace id is no trace id
    assert stream["bytes"] is None  # streamed
    [record] = [r for r in lines(access) if r.__dict__["path"] == "/users/42"]
    assert record.__dict__["route"] == "/users/{user_id}"
    assert record.__dict__["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"


async def test_a_cancelled_request_says_why_in_json(access: pytest.LogCaptureFixture) -> None:
    started, logged = trio.Event(), trio.Event()

    async def outside(request: Request, next: Next) -> Response:
        try:
            return await next(request)
        finally:
            logged.set()  # the logger inside has written its line

    async def wait() -> str:
        started.set()
        await trio.sleep_forever()
        return "never"

    router = (
        Router().middleware(outside).middleware(LoggerMiddleware(format="json")).get("/wait", wait)
    )
    async with raw_server(router) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        await started.wait()
        await conn.close_write()  # the client goes away: the handler is cancelled
        with trio.fail_after(5):
            await logged.wait()
    [line] = [json.loads(r.getMessage()) for r in lines(access)]
    assert (line["status"], line["cancelled_by"]) == (None, "disconnect")


def test_the_format_is_text_or_json() -> None:
    with pytest.raises(ValueError, match='format must be "text" or "json"'):
        LoggerMiddleware(format="xml")  # type: ignore[arg-type]
