"""``openapi_document``: the OpenAPI document of a router (frozen here) or of a frozen app."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._app import App, freeze
from .._routing.router import Router
from .document import build_document

__all__ = ["openapi_document"]


def openapi_document(
    router_or_app: Router | App,
    *,
    title: str,
    version: str,
    description: str | None = None,
    servers: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``router_or_app`` (a ``Router`` is frozen first) as a
    dictionary, for tests and export. ``ConfigurationError`` for a type no schema can
    describe."""
    app = router_or_app if isinstance(router_or_app, App) else freeze(router_or_app)
    return build_document(
        app, title=title, version=version, description=description, servers=servers
    )
