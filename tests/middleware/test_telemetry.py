"""``Telemetry``: spans and metrics per the OpenTelemetry HTTP semantic conventions, checked
with the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from trioframe import Error, Path, Request, Response, Router
from trioframe.middleware import Telemetry
from trioframe.middleware.telemetry import DURATION_BUCKETS
from trioframe.testing import TestClient

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.telemetry = Telemetry(
            self.tracer_provider, MeterProvider(metric_readers=[self.reader])
        )

    def metrics(self) -> dict[str, list[Any]]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return {
            metric.name: list(metric.data.data_points)
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }


async def get_user(user_id: Path[int]) -> str:
    return f"user {user_id}"


async def broken() -> Response:
    raise Error.internal("down")


async def slow(request: Request) -> str:
    await trio.sleep_forever()
    return "never"


def app(recorded: Recorded) -> Router:
    return (
        Router()
        .middleware(recorded.telemetry)
        .get("/users/{user_id}", get_user)
        .get("/broken", broken)
        .post("/slow", slow)
    )


async def test_a_server_span_per_request_named_by_its_route() -> None:
    recorded = Recorded()
    async with TestClient(app(recorded), client=("10.0.0.7", 4321)) as client:
        await client.get(
            "/users/42?token=secret",
            headers={"traceparent": f"00-{TRACE_ID}-{PARENT}-01", "user-agent": "tests/1"},
        )
        await client.get("/nowhere")
    span, missing = recorded.spans.get_finished_spans()
    assert (span.name, span.kind) == ("GET /users/{user_id}", SpanKind.SERVER)
    assert format(span.context.trace_id, "032x") == TRACE_ID  # the trace continued
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT
    assert dict(span.attributes or {}) == {
        "http.request.method": "GET",
        "url.path": "/users/42",
        "url.scheme": "http",
        "network.protocol.version": "1.1",
        "http.route": "/users/{user_id}",
        "client.address": "10.0.0.7",
        "server.address": "testserver",
        "user_agent.original": "tests/1",
        "http.response.status_code": 200,
    }
    assert span.status.status_code is StatusCode.UNSET
    assert missing.name == "GET"  # no route matched: the method alone
    assert (missing.attributes or {})["http.response.status_code"] == 404
    assert "http.route" not in (missing.attributes or {})


async def test_a_5xx_is_an_error() -> None:
    recorded = Recorded()
    async with TestClient(app(recorded)) as client:
        await client.get("/broken")
    [span] = recorded.spans.get_finished_spans()
    assert (span.attributes or {})["error.type"] == "500"
    assert span.status.status_code is StatusCode.ERROR


async def test_a_cancelled_request_ends_its_span_with_an_event() -> None:
    recorded = Recorded()
    async with TestClient(app(recorded)) as client:
        with trio.move_on_after(0.1):
            await client.post("/slow", content=b"abc")
    [span] = recorded.spans.get_finished_spans()
    assert (span.attributes or {})["error.type"] == "Cancelled"
    assert [event.name for event in span.events] == ["trioframe.cancelled"]
    assert span.status.status_code is StatusCode.ERROR


async def test_the_http_server_metrics() -> None:
    recorded = Recorded()
    async with TestClient(app(recorded)) as client:
        for user in (1, 2, 3):
            await client.get(f"/users/{user}")
    metrics = recorded.metrics()
    [duration] = metrics["http.server.request.duration"]
    assert duration.count == 3
    assert tuple(duration.explicit_bounds) == DURATION_BUCKETS
    assert dict(duration.attributes) == {
        "http.request.method": "GET",
        "url.scheme": "http",
        "http.route": "/users/{user_id}",  # the route, never the path: few values
        "http.response.status_code": 200,
    }
    [active] = metrics["http.server.active_requests"]
    assert active.value == 0
    [size] = metrics["http.server.response.body.size"]
    assert (size.count, size.sum) == (3, len(b"user 1") * 3)


def test_without_the_api_installed_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from trioframe import ConfigurationError

    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'trioframe\[otel\]'"):
        Telemetry()


async def test_without_a_provider_it_only_calls_next() -> None:
    """No provider given and none set globally when the first request arrives (as in this
    test run): that is decided once, and the requests go straight through."""
    telemetry = Telemetry()
    router = Router().middleware(telemetry).get("/users/{user_id}", get_user)
    async with TestClient(router) as client:
        assert (await client.get("/users/7")).text == "user 7"
    assert telemetry._configured is False
