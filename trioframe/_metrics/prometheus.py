"""``PrometheusObserver``: an application's metrics in prometheus_client, and the handler
that serves them in the Prometheus text format.

Two modes, chosen when the app is frozen:

* one process: the metrics live in a ``CollectorRegistry`` of this app's own (never the global
  default registry), so two apps in one process keep separate figures;
* several processes (``PROMETHEUS_MULTIPROC_DIR`` is set: a worker fleet sets it for its
  workers before they import the app): prometheus_client's multiprocess mode. Every process
  writes its values to files in that directory and a scrape, whichever worker answers it, sums
  the files of every process of the fleet (the live gauges over the processes still running:
  ``multiprocess_mode="livesum"``; the supervisor marks dead workers).

A scrape reads the values (and in multiprocess mode, files) in a worker thread, never on the
event loop. Recording is cheap but not free: the label children of each series are looked up
once and kept.
"""

from __future__ import annotations

import os
from typing import Any

import trio
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from .._errors import ConfigurationError
from .._http.semconv import DURATION_BUCKETS
from .._response import Response
from .observer import OTHER_METHOD, method_label

__all__ = ["BODY_SIZE_BUCKETS", "CONTENT_TYPE", "PrometheusObserver", "multiprocess_directory"]

#: Bucket boundaries of the body size histograms, in bytes.
BODY_SIZE_BUCKETS = (0, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000)
#: The labels of the request histograms (the stable HTTP semantic conventions' attributes).
REQUEST_LABELS = ("http_request_method", "http_route", "http_response_status_code")
#: The Prometheus text format that ``generate_latest`` writes (every Prometheus reads it).
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
_LEGACY = "prometheus_multiproc_dir"  # (what prometheus_client read before the upper case)


def multiprocess_directory() -> str | None:
    """The multiprocess directory prometheus_client writes to, ``None`` in one process.
    ``ConfigurationError`` when it was set too late for prometheus_client, which chooses its
    mode when it is first imported."""
    environment = os.environ
    directory = environment.get("PROMETHEUS_MULTIPROC_DIR") or environment.get(_LEGACY)
    if directory is None:
        return None
    from prometheus_client import values

    if values.ValueClass is values.MutexValue:
        raise ConfigurationError(
            "PROMETHEUS_MULTIPROC_DIR was set after prometheus_client was imported: set it "
            "before the application is imported (a worker fleet sets it for its workers)"
        )
    return directory


class PrometheusObserver:
    """An app's metrics (an ``Observer``); ``scrape`` is the handler of ``Router.metrics``."""

    def __init__(self) -> None:
        self.directory = multiprocess_directory()
        #: this app's registry; ``None`` in multiprocess mode (the files are the registry)
        self.registry = None if self.directory else CollectorRegistry()
        metric = _Factory(self.registry)
        self.duration = metric.histogram(
            "http_server_request_duration_seconds",
            "Duration of HTTP server requests, from the request head to the end of the answer.",
            DURATION_BUCKETS,
        )
        self.active = metric.gauge(
            "http_server_active_requests",
            "Number of HTTP server requests being served.",
            ("http_request_method",),
        )
        self.request_size = metric.histogram(
            "http_server_request_body_size_bytes",
            "Size of HTTP server request bodies (the declared Content-Length, else as read).",
            BODY_SIZE_BUCKETS,
        )
        self.response_size = metric.histogram(
            "http_server_response_body_size_bytes",
            "Size of HTTP server response bodies, as sent.",
            BODY_SIZE_BUCKETS,
        )
        self.connections = metric.gauge(
            "trioframe_open_connections", "Connections open, by protocol.", ("protocol",)
        )
        self.accepted = metric.counter(
            "trioframe_connections", "Connections served, by protocol.", ("protocol",)
        )
        self.evicted = metric.counter(
            "trioframe_connections_evicted",
            "Connections closed at the connection limit for a waiting client, by what they "
            "were doing.",
            ("state",),
        )
        self.tls_failures = metric.counter(
            "trioframe_tls_handshake_failures", "TLS handshakes that failed.", ("reason",)
        )
        self.goaways = metric.counter(
            "trioframe_http2_error_goaways",
            "HTTP/2 connections ended with an error GOAWAY, by reason.",
            ("reason",),
        )
        self.websockets = metric.gauge(
            "trioframe_websocket_sessions_active", "WebSocket sessions open.", ("http_route",)
        )
        self.websocket_sessions = metric.counter(
            "trioframe_websocket_sessions", "WebSocket sessions begun.", ("http_route",)
        )
        self.shutdown_refusals = metric.counter(
            "trioframe_requests_refused_at_shutdown",
            "Requests answered 503 because graceful shutdown had begun.",
        )
        self._requests: dict[tuple[str, str, str], tuple[Any, Any, Any]] = {}
        self._active: dict[bytes, Any] = {}

    # -- the Observer interface -------------------------------------------------------------
    def request_started(self, method: bytes) -> None:
        self._active_child(method).inc()

    def request_ended(self, method: bytes) -> None:
        self._active_child(method).dec()

    def request_answered(
        self,
        method: bytes,
        route: str | None,
        status: int | None,
        seconds: float,
        request_size: int | None,
        response_size: int | None,
    ) -> None:
        key = (method_label(method), route or "", "" if status is None else str(status))
        children = self._requests.get(key)
        if children is None:
            children = self._requests[key] = (
                self.duration.labels(*key),
                self.request_size.labels(*key),
                self.response_size.labels(*key),
            )
        duration, requested, responded = children
        duration.observe(seconds)
        if request_size is not None:
            requested.observe(request_size)
        if response_size is not None:
            responded.observe(response_size)

    def connection_opened(self, protocol: str) -> None:
        self.connections.labels(protocol).inc()
        self.accepted.labels(protocol).inc()

    def connection_closed(self, protocol: str) -> None:
        self.connections.labels(protocol).dec()

    def connection_evicted(self, state: str) -> None:
        self.evicted.labels(state).inc()

    def tls_handshake_failed(self, reason: str) -> None:
        self.tls_failures.labels(reason).inc()

    def http2_error_goaway(self, reason: str) -> None:
        self.goaways.labels(reason).inc()

    def websocket_opened(self, route: str | None) -> None:
        self.websockets.labels(route or "").inc()
        self.websocket_sessions.labels(route or "").inc()

    def websocket_closed(self, route: str | None) -> None:
        self.websockets.labels(route or "").dec()

    def refused_at_shutdown(self) -> None:
        self.shutdown_refusals.inc()

    # -- the scrape ------------------------------------------------------------------------------
    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format: this app's, or in multiprocess mode,
        everything the processes sharing the directory have written (reads files: run it in
        a thread)."""
        if self.registry is not None:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry, self.directory)  # type: ignore[no-untyped-call]
        return generate_latest(registry)

    async def scrape(self) -> Response:
        """The handler of the metrics route: ``exposition()``, made in a worker thread."""
        body = await trio.to_thread.run_sync(self.exposition)
        return Response(200, body, [(b"content-type", CONTENT_TYPE)])

    def _active_child(self, method: bytes) -> Any:
        child = self._active.get(method)
        if child is None:
            label = method_label(method)
            child = self.active.labels(label)
            if label != OTHER_METHOD:  # (any other method: looked up each time, never kept)
                self._active[method] = child
        return child


class _Factory:
    """Makes the metrics in ``registry`` (``None``: in no registry, the multiprocess files)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.registry = registry

    def histogram(self, name: str, documentation: str, buckets: tuple[float, ...]) -> Histogram:
        return Histogram(
            name, documentation, REQUEST_LABELS, buckets=buckets, registry=self.registry
        )

    def gauge(self, name: str, documentation: str, labels: tuple[str, ...]) -> Gauge:
        return Gauge(
            name, documentation, labels, registry=self.registry, multiprocess_mode="livesum"
        )

    def counter(self, name: str, documentation: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(name, documentation, labels, registry=self.registry)
