"""What ties work started from a request to that request's OpenTelemetry span, without
importing OpenTelemetry unless ``Telemetry`` runs: the tracer of the ``Telemetry`` middleware
serving the current request (a context variable, set only around a traced request), and
running a function inside a span that links to another instead of being its child."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

__all__ = ["REQUEST_TRACER", "Link", "link_here", "run_linked"]

#: The tracer of the ``Telemetry`` middleware serving the current request, while it does.
REQUEST_TRACER: ContextVar[Any] = ContextVar("trioframe.request_tracer", default=None)

#: What a task's span links to: the tracer to start it with, and the span context to link.
Link = tuple[Any, Any]


def link_here() -> Link | None:
    """The link for work started here: ``None`` outside a request ``Telemetry`` traces."""
    tracer = REQUEST_TRACER.get()
    if tracer is None:
        return None
    from opentelemetry import trace

    here = trace.get_current_span().get_span_context()
    return (tracer, here) if here.is_valid else None


async def run_linked(
    tracer: Any, started_from: Any, fn: Callable[..., Awaitable[Any]], *args: Any
) -> Any:
    """``await fn(*args)`` inside a span of its own (``INTERNAL``, named after ``fn``) that
    starts a new trace and links to the span context ``started_from`` (when it is valid): work that
    outlives a request is not that request's child. An exception is recorded on the span and
    propagates; so does a cancellation."""
    from opentelemetry import context, trace

    links = [trace.Link(started_from)] if started_from.is_valid else []
    name = getattr(fn, "__qualname__", None) or repr(fn)
    with tracer.start_as_current_span(
        name, context=context.Context(), kind=trace.SpanKind.INTERNAL, links=links
    ):
        return await fn(*args)
