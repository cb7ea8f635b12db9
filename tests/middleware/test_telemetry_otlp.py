"""``Telemetry`` end to end over OTLP/HTTP: a trioframe server on 127.0.0.1 instrumented with
the SDK and its OTLP/HTTP exporters, which send to a small receiver started by the test; the
assertions are on what the receiver decoded from the protobuf bodies, as a collector would.

The exporters are synchronous (``requests``): the spans go out from the
``BatchSpanProcessor``'s thread, and the providers are flushed in a worker thread once the
requests have been answered, so no export ever runs on the trio loop."""

from __future__ import annotations

import gzip
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import trio
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

from trioframe import Path, Router, __version__
from trioframe.middleware import Telemetry
from trioframe.middleware.telemetry import DURATION_BUCKETS

from ..loopback._support import serving

pytestmark = pytest.mark.loopback

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
#: Seconds: each export request, each flush, and the whole test.
EXPORT_TIMEOUT = 5
TEST_TIMEOUT = 30
#: Given explicitly, so that no ``OTEL_RESOURCE_ATTRIBUTES`` of the environment gets in.
RESOURCE = Resource({"service.name": "otlp-test"})


class Received:
    """What the receiver decoded, per signal, in arrival order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        #: (path, Content-Type, Content-Encoding) of every POST to a signal's path
        self.requests: list[tuple[str, str | None, str | None]] = []
        self.errors: list[str] = []


class _Receiver(ThreadingHTTPServer):
    received: Received


class _Handler(BaseHTTPRequestHandler):
    """``POST /v1/traces`` and ``POST /v1/metrics`` with a protobuf body (gzip-compressed when
    ``Content-Encoding`` says so), answered 200 with an empty protobuf response; 400 for a
    body that does not decode, 404 for another path. One request per connection (HTTP/1.0)."""

    server: _Receiver
    timeout = EXPORT_TIMEOUT  # on the socket: a stalled client cannot hold a thread

    def do_POST(self) -> None:
        received = self.server.received
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        signal = {"/v1/traces": received.traces, "/v1/metrics": received.metrics}.get(self.path)
        if signal is None:
            self._answer(404, b"")
            return
        encoding = self.headers.get("Content-Encoding")
        with received.lock:
            received.requests.append((self.path, self.headers.get("Content-Type"), encoding))
        try:
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding not in (None, "identity"):
                raise ValueError(f"unexpected Content-Encoding {encoding!r}")
            if signal is received.traces:
                message: Any = ExportTraceServiceRequest.FromString(body)
                response: Any = ExportTraceServiceResponse()
            else:
                message = ExportMetricsServiceRequest.FromString(body)
                response = ExportMetricsServiceResponse()
        except Exception as exc:
            with received.lock:
                received.errors.append(f"{self.path}: {exc!r}")
            self._answer(400, b"")
            return
        with received.lock:
            signal.append(message)
        self._answer(200, response.SerializeToString())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log on stderr


@contextmanager
def receiving() -> Iterator[tuple[Received, int]]:
    """An OTLP/HTTP receiver on 127.0.0.1 (a free port) served by a thread, stopped on exit:
    ``(what it received, its port)``."""
    server = _Receiver(("127.0.0.1", 0), _Handler)
    server.received = Received()
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="otlp-receiver"
    )
    thread.start()
    try:
        yield server.received, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(EXPORT_TIMEOUT)
        assert not thread.is_alive(), "the receiver thread did not stop"


def providers(port: int) -> tuple[TracerProvider, MeterProvider]:
    """The SDK's providers exporting to the receiver: spans through a ``BatchSpanProcessor``
    (gzip, so the receiver's decompression is exercised), metrics only when flushed (no
    periodic export: one collection, deterministic counts)."""
    tracer_provider = TracerProvider(resource=RESOURCE, sampler=ParentBased(ALWAYS_ON))
    span_exporter = OTLPSpanExporter(
        endpoint=f"http://127.0.0.1:{port}/v1/traces",
        compression=Compression.Gzip,
        timeout=EXPORT_TIMEOUT,
    )
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    metric_exporter = OTLPMetricExporter(
        endpoint=f"http://127.0.0.1:{port}/v1/metrics",
        compression=Compression.NoCompression,
        timeout=EXPORT_TIMEOUT,
    )
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=math.inf)
    return tracer_provider, MeterProvider(resource=RESOURCE, metric_readers=[reader])


def flush_and_shut_down(tracer_provider: TracerProvider, meter_provider: MeterProvider) -> bool:
    """Blocking (the exporters send synchronously): run it in a worker thread."""
    flushed = tracer_provider.force_flush(EXPORT_TIMEOUT * 1000)
    flushed = meter_provider.force_flush(EXPORT_TIMEOUT * 1000) and flushed
    tracer_provider.shutdown()
    meter_provider.shutdown(EXPORT_TIMEOUT * 1000)
    return flushed


def attributes(pairs: Sequence[KeyValue]) -> dict[str, Any]:
    """OTLP ``KeyValue``s as a dict of plain values."""
    decoded = {}
    for pair in pairs:
        kind = pair.value.WhichOneof("value")
        assert kind is not None, pair
        decoded[pair.key] = getattr(pair.value, kind)
    return decoded


async def get_user(user_id: Path[int]) -> str:
    return f"user {user_id}"


async def test_spans_and_metrics_reach_an_otlp_http_collector() -> None:
    with receiving() as (received, receiver_port):
        tracer_provider, meter_provider = providers(receiver_port)
        telemetry = Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
        router = Router().middleware(telemetry).get("/users/{user_id}", get_user)
        with trio.fail_after(TEST_TIMEOUT):
            async with (
                serving(router) as served,
                httpx.AsyncClient(base_url=served.url, timeout=EXPORT_TIMEOUT) as client,
            ):
                traceparent = f"00-{TRACE_ID}-{PARENT}-01"
                statuses = [
                    (await client.get("/users/1", headers={"traceparent": traceparent})).status_code
                ]
                statuses += [(await client.get(f"/users/{user}")).status_code for user in (2, 3)]
                statuses.append((await client.get("/nowhere")).status_code)
            flushed = await trio.to_thread.run_sync(
                flush_and_shut_down, tracer_provider, meter_provider, abandon_on_cancel=True
            )
    assert statuses == [200, 200, 200, 404]
    assert flushed
    assert received.errors == []
    paths = {path for path, _, _ in received.requests}
    assert paths == {"/v1/traces", "/v1/metrics"}
    for path, content_type, encoding in received.requests:
        assert content_type == "application/x-protobuf"
        assert encoding == ("gzip" if path == "/v1/traces" else None)

    # Traces: four SERVER spans under the scope "trioframe", in the order they ended (in one
    # export or more: the processor also exports on its schedule).
    spans = []
    for request in received.traces:
        for resource_spans in request.resource_spans:
            assert attributes(resource_spans.resource.attributes)["service.name"] == "otlp-test"
            for scope_spans in resource_spans.scope_spans:
                scope = (scope_spans.scope.name, scope_spans.scope.version)
                assert scope == ("trioframe", __version__)
                spans += scope_spans.spans
    continued, second, third, missing = spans
    for span, user in ((continued, 1), (second, 2), (third, 3)):
        assert (span.name, span.kind) == ("GET /users/{user_id}", Span.SpanKind.SPAN_KIND_SERVER)
        span_attributes = attributes(span.attributes)
        assert span_attributes["http.route"] == "/users/{user_id}"
        assert span_attributes["http.response.status_code"] == 200
        assert span_attributes["url.path"] == f"/users/{user}"
        assert span_attributes["server.address"] == "127.0.0.1"
        assert span_attributes["server.port"] == served.port
        assert span_attributes["client.address"] == "127.0.0.1"
    assert continued.trace_id.hex() == TRACE_ID  # the client's traceparent, continued
    assert continued.parent_span_id.hex() == PARENT
    for span in (second, third):  # no traceparent: a trace of its own
        assert span.trace_id.hex() != TRACE_ID
        assert span.parent_span_id == b""
    assert len({continued.span_id, second.span_id, third.span_id}) == 3
    assert missing.name == "GET"  # no route matched
    assert attributes(missing.attributes)["http.response.status_code"] == 404
    assert "http.route" not in attributes(missing.attributes)

    # Metrics: the first export (the flush); the shutdown's, if any, repeats the cumulative sums.
    first = received.metrics[0]
    [resource_metrics] = first.resource_metrics
    assert attributes(resource_metrics.resource.attributes)["service.name"] == "otlp-test"
    [scope_metrics] = resource_metrics.scope_metrics
    assert (scope_metrics.scope.name, scope_metrics.scope.version) == ("trioframe", __version__)
    metrics = {metric.name: metric for metric in scope_metrics.metrics}
    assert set(metrics) == {
        "http.server.request.duration",
        "http.server.active_requests",
        "http.server.response.body.size",
    }  # http.server.request.body.size: a GET declares no Content-Length
    duration = metrics["http.server.request.duration"]
    assert (duration.unit, duration.WhichOneof("data")) == ("s", "histogram")
    points = {
        attributes(point.attributes).get("http.route"): point
        for point in duration.histogram.data_points
    }
    assert set(points) == {"/users/{user_id}", None}
    routed = points["/users/{user_id}"]
    assert attributes(routed.attributes) == {
        "http.request.method": "GET",
        "url.scheme": "http",
        "http.route": "/users/{user_id}",
        "http.response.status_code": 200,
    }
    assert routed.count == 3
    assert sum(routed.bucket_counts) == 3
    assert 0 < routed.sum < TEST_TIMEOUT
    assert tuple(routed.explicit_bounds) == DURATION_BUCKETS
    assert points[None].count == 1
    assert attributes(points[None].attributes)["http.response.status_code"] == 404
    [active] = metrics["http.server.active_requests"].sum.data_points
    assert active.as_int == 0
