"""The route that serves an application's OpenAPI document (``Router.openapi``).

The router only holds what the document is to say (title, version, ...) and the handler that
serves it; the document is built when the router is frozen, from the frozen app's routes
(``_app`` calls ``_openapi.document.build_document`` and hands the JSON over with ``serve``),
so a type no schema can describe is a ``ConfigurationError`` at startup, never at the first
visit.
"""

from __future__ import annotations

import attrs

from .._response import Response

__all__ = ["OpenAPIDocument"]


@attrs.define(eq=False)
class OpenAPIDocument:
    """What ``Router.openapi`` was given, and, once frozen, the document's JSON (``body``).
    Calling it is the document route's handler."""

    path: str
    title: str
    version: str
    description: str | None = None
    servers: tuple[str, ...] = ()
    body: bytes = b""

    def serve(self, body: bytes) -> None:
        """The document to answer with from now on (the app's, as JSON)."""
        self.body = body

    async def __call__(self) -> Response:
        return Response(200, self.body, [(b"content-type", b"application/json")])
