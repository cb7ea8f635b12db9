"""``Telemetry`` and what only the server knows: why a request was cancelled (span events and
``error.type``), a span per WebSocket session, background work linked to its request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.lowlevel
import trio.testing
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from tests.http2.support import CANCEL, connect, h2_config, h2_server, rst_stream
from tests.middleware.test_telemetry import PARENT, TRACE_ID, Recorded
from trioframe import (
    BackgroundTasks,
    Next,
    Request,
    Response,
    Router,
    State,
    WebSocketConnection,
)
from trioframe.middleware import TimeoutMiddleware, linked_task
from trioframe.testing import TestClient


async def wait() -> str:
    await trio.sleep_forever()
    return "never"


class Waiting:
    """A handler that tells when it has started, then waits until it is cancelled."""

    def __init__(self) -> None:
        self.started = trio.Event()

    async def __call__(self) -> str:
        self.started.set()
        return await wait()


def causes(span: Any) -> list[Any]:
    return [(event.name, dict(event.attributes or {})["trioframe.cause"]) for event in span.events]


class Ended(SpanProcessor):
    """Wakes ``finished`` whenever a span ends."""

    def __init__(self) -> None:
        self.event = trio.Event()

    def on_end(self, span: ReadableSpan) -> None:
        self.event.set()


async def finished(recorded: Recorded, count: int = 1) -> list[Any]:
    """The finished spans, once there are ``count``."""
    ended = Ended()
    recorded.tracer_provider.add_span_processor(ended)
    with trio.fail_after(10):
        while len(spans := recorded.spans.get_finished_spans()) < count:
            await ended.event.wait()
            ended.event = trio.Event()
    return list(spans)


async def test_a_503_at_shutdown(autojump_clock: trio.testing.MockClock) -> None:
    recorded = Recorded()
    waiting = Waiting()
    router = Router().middleware(recorded.telemetry).get("/wait", waiting)
    async with h2_server(router, h2_config(shutdown_timeout=5)) as (server, nursery):
        await nursery.start(server.serve)
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait")
        await waiting.started.wait()
        server.shutdown()
        assert (await peer.response(1)).status == 503
    [span] = await finished(recorded)
    assert causes(span) == [("trioframe.cancelled", "shutdown")]
    attributes = dict(span.attributes or {})
    assert (attributes["http.response.status_code"], attributes["error.type"]) == (503, "503")
    assert span.status.status_code is StatusCode.ERROR
    [duration] = recorded.metrics()["http.server.request.duration"]
    assert duration.attributes["http.response.status_code"] == 503


async def test_an_http2_stream_reset(autojump_clock: trio.testing.MockClock) -> None:
    recorded = Recorded()
    waiting = Waiting()
    router = Router().middleware(recorded.telemetry).get("/wait", waiting)
    async with h2_server(router) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"GET", b"/wait")
        await waiting.started.wait()
        await peer.send(rst_stream(1, CANCEL))
        [span] = await finished(recorded)
    assert causes(span) == [("trioframe.cancelled", "stream_reset")]
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "Cancelled"
    assert "http.response.status_code" not in attributes  # nothing was answered


async def test_a_deadline_inside_answered_503() -> None:
    recorded = Recorded()
    router = (
        Router()
        .middleware(recorded.telemetry)
        .middleware(TimeoutMiddleware(0.05))
        .get("/wait", wait)
    )
    async with TestClient(router) as client:
        assert (await client.get("/wait")).status_code == 503
    [span] = recorded.spans.get_finished_spans()
    assert causes(span) == [("trioframe.cancelled", "deadline")]
    assert dict(span.attributes or {})["error.type"] == "503"


async def test_a_deadline_outside_cancels_the_span() -> None:
    recorded = Recorded()

    async def deadline(request: Request, next: Next) -> Response:
        with trio.move_on_after(0.05):
            return await next(request)
        return Response.error(504, "too slow")

    router = Router().middleware(deadline).middleware(recorded.telemetry).get("/wait", wait)
    async with TestClient(router) as client:
        assert (await client.get("/wait")).status_code == 504
    [span] = recorded.spans.get_finished_spans()
    assert causes(span) == [("trioframe.cancelled", "deadline")]
    assert dict(span.attributes or {})["error.type"] == "Cancelled"


async def echo_twice(ws: WebSocketConnection) -> None:
    for _ in range(2):
        message = await ws.recv()
        assert message is not None
        await ws.send_text("echo")
    await ws.send_text("bye")
    await ws.close()


async def test_a_websocket_session_gets_a_span_linked_to_its_request() -> None:
    recorded = Recorded()
    router = Router().middleware(recorded.telemetry).websocket("/ws", echo_twice)
    async with TestClient(router) as client, client.websocket("/ws") as ws:
        for text in ("one", "two"):
            await ws.send_text(text)
            assert await ws.receive_text() == "echo"
        assert await ws.receive_text() == "bye"
    request, session = await finished(recorded, 2)
    assert request.name == "GET /ws"
    assert dict(request.attributes or {})["http.response.status_code"] == 101
    assert (session.name, session.kind) == ("GET /ws WebSocket", SpanKind.SERVER)
    assert dict(session.attributes or {}) == {
        "trioframe.websocket.messages_received": 2,
        "trioframe.websocket.messages_sent": 3,
    }
    assert session.parent is None  # not the request's child: it outlives the request
    [link] = session.links
    assert link.context.span_id == request.context.span_id
    assert session.start_time >= request.end_time


async def test_a_websocket_session_continues_the_request_s_traceparent() -> None:
    recorded = Recorded()
    router = Router().middleware(recorded.telemetry).websocket("/ws", echo_twice)
    traceparent = f"00-{TRACE_ID}-{PARENT}-01"
    async with (
        TestClient(router) as client,
        client.websocket("/ws", headers={"traceparent": traceparent}) as ws,
    ):
        for text in ("one", "two"):
            await ws.send_text(text)
            await ws.receive_text()
        await ws.receive_text()
    request, session = await finished(recorded, 2)
    for span in (request, session):
        assert format(span.context.trace_id, "032x") == TRACE_ID
        assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT
    assert [link.context.span_id for link in session.links] == [request.context.span_id]


@attrs.frozen
class Background:
    nursery: trio.Nursery


@asynccontextmanager
async def background(nursery: trio.Nursery) -> AsyncIterator[Background]:
    yield Background(nursery)


async def test_background_work_is_linked_to_its_request_not_parented() -> None:
    recorded = Recorded()
    tracer = recorded.tracer_provider.get_tracer("tests")
    done = trio.Event()

    async def refresh(key: str) -> None:
        with tracer.start_as_current_span(f"load {key}"):
            await trio.lowlevel.checkpoint()
        done.set()

    async def start(tasks: State[Background]) -> str:
        tasks.nursery.start_soon(
            linked_task(refresh, tracer_provider=recorded.tracer_provider), "k"
        )
        return "started"

    router = Router().lifespan(background).middleware(recorded.telemetry).post("/refresh", start)
    async with TestClient(router) as client:
        assert (await client.post("/refresh")).text == "started"
        with trio.fail_after(5):
            await done.wait()
    spans = {span.name: span for span in await finished(recorded, 3)}
    request, task = spans["POST /refresh"], spans[refresh.__qualname__]
    load = spans["load k"]
    assert task.kind is SpanKind.INTERNAL
    assert task.parent is None and task.context.trace_id != request.context.trace_id
    assert [link.context.span_id for link in task.links] == [request.context.span_id]
    assert load.parent is not None and load.parent.span_id == task.context.span_id


async def test_a_linked_task_started_outside_a_request_has_no_link() -> None:
    recorded = Recorded()
    ran: list[bool] = []

    async def job() -> None:
        ran.append(trace.get_current_span().is_recording())

    await linked_task(job, tracer_provider=recorded.tracer_provider)()
    [span] = recorded.spans.get_finished_spans()
    assert (span.name, list(span.links)) == (
        "test_a_linked_task_started_outside_a_request_has_no_link.<locals>.job",
        [],
    )
    assert ran == [True]


def test_linked_task_without_the_api_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from trioframe import ConfigurationError

    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'trioframe\[otel\]'"):
        linked_task(wait)


async def test_background_tasks_get_spans_linked_to_their_request() -> None:
    recorded = Recorded()
    tracer = recorded.tracer_provider.get_tracer("tests")
    done = trio.Event()

    async def audit(user: str) -> None:
        with tracer.start_as_current_span(f"write {user}"):
            await trio.lowlevel.checkpoint()
        done.set()

    async def sign_up(tasks: BackgroundTasks) -> str:
        tasks.add(audit, "ada")
        return "welcome"

    router = Router().middleware(recorded.telemetry).post("/sign-up", sign_up)
    async with TestClient(router) as client:
        assert (await client.post("/sign-up")).text == "welcome"
        with trio.fail_after(5):
            await done.wait()
    spans = {span.name: span for span in await finished(recorded, 3)}
    request, task, write = spans["POST /sign-up"], spans[audit.__qualname__], spans["write ada"]
    assert task.kind is SpanKind.INTERNAL  # from the Telemetry's own provider, not a global one
    assert task.parent is None and task.context.trace_id != request.context.trace_id
    assert [link.context.span_id for link in task.links] == [request.context.span_id]
    assert write.parent is not None and write.parent.span_id == task.context.span_id


async def test_linked_task_takes_the_provider_of_the_telemetry_of_its_request() -> None:
    recorded = Recorded()
    done = trio.Event()

    async def refresh() -> None:
        done.set()

    async def start(tasks: State[Background]) -> str:
        tasks.nursery.start_soon(linked_task(refresh))  # no provider given, none global
        return "started"

    router = Router().lifespan(background).middleware(recorded.telemetry).post("/refresh", start)
    async with TestClient(router) as client:
        await client.post("/refresh")
        with trio.fail_after(5):
            await done.wait()
    spans = {span.name: span for span in await finished(recorded, 2)}
    request, task = spans["POST /refresh"], spans[refresh.__qualname__]
    assert [link.context.span_id for link in task.links] == [request.context.span_id]
