"""``Telemetry``: an OpenTelemetry span and the HTTP server metrics for every request, per the
stable HTTP semantic conventions.

Only ``opentelemetry-api`` is needed (the ``otel`` extra); the SDK, its processors and
exporters are the application's choice. When neither a tracer nor a meter provider is
configured (none given, and none set globally when the first request arrives: set them at
startup or in a lifespan) the middleware only calls ``next``: a span and four instruments on
OpenTelemetry's no-op objects would still cost more than the rest of the request on the fast
paths.

Cancellation: a request cancelled while the chain runs ends its span with the event
``trioframe.cancelled`` (its ``trioframe.cause`` is ``request.cancelled_by``: the client gone,
an HTTP/2 stream reset, shutdown, a slow body, a deadline) and ``error.type`` set, then the
cancellation propagates unchanged. A WebSocket session gets a span of its own, and
``linked_task`` gives background work one linked to the request's.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._body import Upgrade
from .._errors import ConfigurationError
from .._http.semconv import DURATION_BUCKETS, method_label
from .._tracing import REQUEST_TRACER, run_linked
from .._version import __version__

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._response import Response
    from .._websocket.connection import WebSocketConnection

__all__ = ["DURATION_BUCKETS", "Telemetry", "linked_task"]

#: OpenTelemetry's providers before one is set (a proxy) or when none is to be (no-op).
_UNSET = frozenset(
    {"ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider", "NoOpMeterProvider"}
)
#: The causes of a cancellation after which the server still answers, with what.
_SERVER_ANSWERS = {"shutdown": 503, "body_timeout": 408}


class _HeaderGetter:
    """Reads the propagation headers (``traceparent``, ``tracestate``, ...) of a request."""

    def get(self, carrier: Any, key: str) -> list[str] | None:
        values = [v.decode("latin-1") for k, v in carrier if k == key.encode("latin-1").lower()]
        return values or None

    def keys(self, carrier: Any) -> list[str]:
        return [k.decode("latin-1") for k, _ in carrier]


class Telemetry:
    """Middleware: one ``SERVER`` span per request named ``"{method} {route}"`` (``"GET
    /users/{user_id}"``; the method alone when no route matched), continuing the W3C
    ``traceparent``/``tracestate`` the request carried, with the attributes
    ``http.request.method``, ``url.path``, ``url.scheme``, ``http.route``,
    ``http.response.status_code``, ``network.protocol.version``, ``client.address``,
    ``server.address``, ``server.port``, ``user_agent.original`` and, for a 5xx or a
    cancellation, ``error.type``; and the metrics ``http.server.request.duration`` (seconds,
    the conventions' buckets), ``http.server.active_requests``,
    ``http.server.request.body.size`` (a declared ``Content-Length``) and
    ``http.server.response.body.size`` (a body of bytes).

    ``tracer_provider`` and ``meter_provider`` default to OpenTelemetry's global ones.
    ``ConfigurationError`` when ``opentelemetry-api`` is not installed."""

    __slots__ = (
        "_active",
        "_configured",
        "_duration",
        "_error",
        "_extract",
        "_getter",
        "_kind",
        "_link",
        "_providers",
        "_request_size",
        "_response_size",
        "_tracer",
    )

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        try:
            from opentelemetry import metrics as metrics
            from opentelemetry import propagate as propagate
            from opentelemetry import trace as trace
        except ImportError:
            raise ConfigurationError(
                "Telemetry needs opentelemetry-api: pip install 'trioframe[otel]'"
            ) from None
        self._tracer = trace.get_tracer("trioframe", __version__, tracer_provider)
        #: whether to instrument: decided now when a provider is given, else at the first
        #: request (looking the global providers up costs as much as a small request)
        given = tracer_provider is not None or meter_provider is not None
        self._configured: bool | None = True if given else None
        self._providers = (trace.get_tracer_provider, metrics.get_meter_provider)
        self._kind = trace.SpanKind.SERVER
        self._error = trace.Status(trace.StatusCode.ERROR)
        self._link = trace.Link
        self._extract = propagate.extract
        self._getter: Any = _HeaderGetter()  # (a textmap Getter, duck-typed)
        meter = metrics.get_meter("trioframe", __version__, meter_provider)
        self._duration = meter.create_histogram(
            "http.server.request.duration",
            unit="s",
            description="Duration of HTTP server requests.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self._active = meter.create_up_down_counter(
            "http.server.active_requests",
            unit="{request}",
            description="Number of active HTTP server requests.",
        )
        self._request_size = meter.create_histogram(
            "http.server.request.body.size", unit="By", description="Size of HTTP request bodies."
        )
        self._response_size = meter.create_histogram(
            "http.server.response.body.size",
            unit="By",
            description="Size of HTTP response bodies.",
        )

    async def __call__(self, request: Request, next: Next) -> Response:
        configured = self._configured
        if configured is None:
            configured = self._configured = self._found_configured()
        if not configured:
            return await next(request)
        method = method_label(str(request.method))
        route = request.route
        active = {"http.request.method": method, "url.scheme": request.scheme}
        attributes = _request_attributes(request, method, route)
        parent = self._extract(request.headers.raw, getter=self._getter)
        name = f"{method} {route}" if route is not None else method
        self._active.add(1, active)
        start = trio.current_time()
        with self._tracer.start_as_current_span(
            name,
            context=parent,
            kind=self._kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            traced = REQUEST_TRACER.set(self._tracer)  # (work the request starts links to it)
            try:
                response = await next(request)
            except BaseException as exc:  # Cancelled (the chain answers every Exception)
                cause = _cancel_cause(request)
                span.add_event("trioframe.cancelled", {"trioframe.cause": cause})
                answer = _SERVER_ANSWERS.get(cause)  # what the server sends instead
                error = str(answer) if answer == 503 else type(exc).__name__
                if answer is not None:
                    span.set_attribute("http.response.status_code", answer)
                span.set_attribute("error.type", error)
                span.set_status(self._error)
                self._record(request, start, _measured(active, route, answer, error), None)
                raise
            finally:
                REQUEST_TRACER.reset(traced)
                self._active.add(-1, active)
            status = response.status
            span.set_attribute("http.response.status_code", status)
            if request.cancelled_by == "deadline":  # a middleware inside answered for it
                span.add_event("trioframe.cancelled", {"trioframe.cause": "deadline"})
            error_type = str(status) if status >= 500 else None
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                span.set_status(self._error)
            if status == 101 and type(response.body_stream) is Upgrade:
                response.body_stream = self._traced_session(
                    response.body_stream, name, parent, span
                )
        self._record(request, start, _measured(active, route, status, error_type), response)
        return response

    def _traced_session(
        self, upgrade: Upgrade, name: str, parent: Any, request_span: Any
    ) -> Upgrade:
        """``upgrade`` with its session run inside a span of its own (``"{name} WebSocket"``,
        continuing the request's ``traceparent`` when there was one): linked to the
        request's span, not its child (the session outlives it), and ended with the message
        counts."""
        tracer, kind = self._tracer, self._kind
        links = [self._link(request_span.get_span_context())]

        async def run(connection: WebSocketConnection) -> Any:
            with tracer.start_as_current_span(
                f"{name} WebSocket", context=parent, kind=kind, links=links
            ) as span:
                try:
                    return await upgrade.run(connection)
                finally:
                    span.set_attribute(
                        "trioframe.websocket.messages_received", connection.messages_received
                    )
                    span.set_attribute(
                        "trioframe.websocket.messages_sent", connection.messages_sent
                    )

        return attrs.evolve(upgrade, run=run)

    def _found_configured(self) -> bool:
        """Whether a global tracer or meter provider has been set."""
        tracer_provider, meter_provider = (get() for get in self._providers)
        return not (
            type(tracer_provider).__name__ in _UNSET and type(meter_provider).__name__ in _UNSET
        )

    def _record(
        self,
        request: Request,
        start: float,
        attributes: Mapping[str, Any],
        response: Response | None,
    ) -> None:
        self._duration.record(trio.current_time() - start, attributes)
        if request.content_length is not None:
            self._request_size.record(request.content_length, attributes)
        if response is not None and response.body_stream is None:
            self._response_size.record(len(response.body), attributes)


def _cancel_cause(request: Request) -> str:
    """Why the chain was cancelled: what the server or a middleware said
    (``request.cancelled_by``), else ``"deadline"`` when a deadline around this middleware
    has passed, else ``"cancelled"``."""
    cause = request.cancelled_by
    if cause is not None:
        return cause
    return "deadline" if trio.current_effective_deadline() <= trio.current_time() else "cancelled"


def linked_task(
    fn: Callable[..., Awaitable[Any]], *, tracer_provider: Any = None
) -> Callable[..., Awaitable[Any]]:
    """``fn`` as background work (``nursery.start_soon(linked_task(fn), *args)`` from a handler):
    its task runs inside a span of its own (``INTERNAL``, named after ``fn``) that starts a
    new trace and links to the span current where the task was started (the request's),
    instead of being that span's child: a task started in the app nursery outlives the
    request. Its own spans are children of that span. The span is started with
    ``tracer_provider`` when given, else with the provider of the ``Telemetry`` that traced
    the request the task was started from, else with the global one. An exception is
    recorded on the span and propagates; so does a cancellation. ``ConfigurationError``
    without ``opentelemetry-api``. (``BackgroundTasks`` links its functions this way by
    itself.)"""
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigurationError(
            "linked_task needs opentelemetry-api: pip install 'trioframe[otel]'"
        ) from None
    given = None if tracer_provider is None else _tracer(tracer_provider)

    @functools.wraps(fn)
    async def run(*args: Any) -> Any:
        tracer = given or REQUEST_TRACER.get() or _tracer(None)
        started_from = trace.get_current_span().get_span_context()
        return await run_linked(tracer, started_from, fn, *args)

    return run


def _tracer(provider: Any) -> Any:
    from opentelemetry import trace

    return trace.get_tracer("trioframe", __version__, provider)


def _request_attributes(request: Request, method: str, route: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.path": request.uri.path,
        "url.scheme": request.scheme,
        "network.protocol.version": request.version,
    }
    if route is not None:
        attributes["http.route"] = route
    client = request.client
    if client is not None:
        attributes["client.address"] = client[0]
    host = request.host
    if host:
        address, _, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
        attributes["server.address"] = address or host
        if port.isdigit():
            attributes["server.port"] = int(port)
    agent = request.headers.get("user-agent")
    if agent is not None:
        attributes["user_agent.original"] = agent
    return attributes


def _measured(
    active: Mapping[str, Any], route: str | None, status: int | None, error: str | None
) -> dict[str, Any]:
    """The metric attributes: few values each (never the path)."""
    attributes = dict(active)
    if route is not None:
        attributes["http.route"] = route
    if status is not None:
        attributes["http.response.status_code"] = status
    if error is not None:
        attributes["error.type"] = error
    return attributes
