"""``MetricsRoute``: what ``Router.metrics`` registers, until the router is frozen.

The route's handler is this object, but it never answers itself: each frozen app has metrics
of its own (two apps in one process never share a series), so ``freeze`` makes the app's
observer and serves the route with the observer's ``scrape`` instead (``_app``).
"""

from __future__ import annotations

import attrs

from .._errors import ConfigurationError
from .._response import Response

__all__ = ["EXTRA_HINT", "MetricsRoute", "require_prometheus_client"]

#: How to install what the metrics need.
EXTRA_HINT = "pip install 'trioframe[prometheus]'"


def require_prometheus_client() -> None:
    """``ConfigurationError`` naming the extra when prometheus_client is not installed."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            f"Router.metrics() needs prometheus_client: {EXTRA_HINT}"
        ) from None


@attrs.frozen(eq=False)
class MetricsRoute:
    """The path ``Router.metrics`` serves the metrics at; stands for the handler until the
    app that serves it is frozen."""

    path: str

    async def __call__(self) -> Response:
        raise RuntimeError(  # pragma: no cover (freeze replaces it with the app's own)
            "the metrics route of a router that was not frozen"
        )
