"""The documentation pages: Swagger UI and Redoc, served from files shipped in the package
(``assets/``, refreshed by ``scripts/refresh_docs_assets.py``), so they work offline and ask
no other host for anything.

Each page is a small HTML document, built once when the routes are registered, that loads
its bundle, its stylesheet and a start script from ``<page>/assets/``. Every asset's URL
carries the first hex digits of the file's sha256, so the assets are served as immutable
(cached for a year) and a new file is a new URL. The pages' ``Content-Security-Policy``
allows only this origin (see ``SWAGGER_UI_POLICY`` and ``REDOC_POLICY`` for the two
exceptions the bundles need).
"""

from __future__ import annotations

import hashlib
import html
import pathlib
from collections.abc import Callable
from functools import cache
from typing import Any, Protocol, TypeVar

from .._errors import ConfigurationError, Error
from .._extract import Path
from .._response import Response


class Routes(Protocol):
    """Where the pages are registered: a ``Router`` (named here without importing it, so that
    ``Router.openapi`` may register them)."""

    @property
    def get(self) -> Callable[..., Any]: ...


R = TypeVar("R", bound=Routes)

__all__ = ["REDOC_POLICY", "SWAGGER_UI_POLICY", "docs_routes"]

ASSETS = pathlib.Path(__file__).parent / "assets"
IMMUTABLE = "public, max-age=31536000, immutable"
_DIGEST_LENGTH = 12  # hex digits of the sha256 in an asset's URL
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

_SELF_ONLY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
#: Swagger UI's page: only this origin (its icons are ``data:`` images in its stylesheet);
#: "Try it out" can call this origin only.
SWAGGER_UI_POLICY = f"{_SELF_ONLY}; style-src 'self'"
#: Redoc's page: its styles are made at run time into ``<style>`` elements
#: (styled-components), which need ``'unsafe-inline'`` styles, and its search index runs in
#: a worker started from a ``blob:`` URL.
REDOC_POLICY = f"{_SELF_ONLY}; style-src 'self' 'unsafe-inline'; worker-src blob:"

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{links}</head>
<body>
<div id="{root}" data-openapi-url="{openapi_url}"></div>
{scripts}</body>
</html>
"""


@cache
def versioned(name: str) -> str:
    """``name`` (a file of ``assets/``) with the start of its sha256 before the extension:
    ``swagger-ui.css`` -> ``swagger-ui.5ed08757e53d.css``."""
    digest = hashlib.sha256((ASSETS / name).read_bytes()).hexdigest()[:_DIGEST_LENGTH]
    stem, dot, extension = name.rpartition(".")
    return f"{stem}.{digest}{dot}{extension}"


def _check_path(keyword: str, path: str) -> str:
    if not path.startswith("/") or path.endswith("/") or "{" in path or "}" in path:
        raise ConfigurationError(
            f"docs_routes(): {keyword} must start with '/', not end with '/' and hold no "
            f"{{parameter}}, such as '/docs'; got {path!r}"
        )
    return path


def _page(
    router: Routes, path: str, name: str, files: tuple[str, ...], policy: str, **fields: str
) -> None:
    """Register the page at ``path`` (route ``name``, with ``policy`` and its HTML's
    ``fields``) and its assets (``files``, linked in that order) at
    ``path/assets/<versioned name>`` (route ``name_assets``)."""
    # The page's URLs are relative to it (``docs/assets/...`` from ``/docs``), so they stay
    # right when the router is nested under a prefix.
    folder = path.rpartition("/")[2] + "/assets/"
    links = scripts = ""
    for file in files:
        if file.endswith(".css"):
            links += f'<link rel="stylesheet" href="{folder}{versioned(file)}">\n'
        else:
            scripts += f'<script src="{folder}{versioned(file)}"></script>\n'
    body = _PAGE.format(links=links, scripts=scripts, **fields).encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-security-policy", policy.encode()),
        (b"x-content-type-options", b"nosniff"),
    ]
    shipped = {versioned(file): (ASSETS / file, _TYPES[(ASSETS / file).suffix]) for file in files}

    async def page() -> Response:
        return Response(200, body, headers)

    async def asset(file: Path[str]) -> Response:
        found = shipped.get(file)
        if found is None:
            raise Error.not_found("file")
        response = Response.file(found[0], content_type=found[1])
        response.with_header("cache-control", IMMUTABLE)
        return response.with_header("x-content-type-options", "nosniff")

    router.get(path, page, name=name, include_in_schema=False)
    router.get(path + "/assets/{file}", asset, name=name + "_assets", include_in_schema=False)


def docs_routes(
    router: R,
    *,
    openapi_url: str,
    title: str = "API documentation",
    docs_path: str | None = "/docs",
    redoc_path: str | None = "/redoc",
) -> R:
    """Register the documentation pages for the OpenAPI document at ``openapi_url`` on
    ``router`` and return it: Swagger UI at ``docs_path`` (route ``swagger_ui``) and Redoc at
    ``redoc_path`` (route ``redoc``), each with its assets under ``<path>/assets/`` (routes
    ``swagger_ui_assets``, ``redoc_assets``); ``None`` leaves a page out. None of the routes
    is in the schema (``include_in_schema=False``).

    ``openapi_url`` is used by the browser as given: an absolute path (``/openapi.json``) or
    one relative to the page. The pages' policy lets them fetch from their own origin only.
    ``title`` is the pages' ``<title>``. A path that does not start with ``/``, ends with
    ``/`` or holds a ``{parameter}`` raises ``ConfigurationError``."""
    if not isinstance(openapi_url, str) or not openapi_url:
        raise ConfigurationError(
            f"docs_routes(): openapi_url must be the document's URL, such as "
            f"'/openapi.json'; got {openapi_url!r}"
        )
    escaped = {"title": html.escape(title), "openapi_url": html.escape(openapi_url)}
    if docs_path is not None:
        _page(
            router,
            _check_path("docs_path", docs_path),
            "swagger_ui",
            ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-init.js"),
            SWAGGER_UI_POLICY,
            root="swagger-ui",
            **escaped,
        )
    if redoc_path is not None:
        _page(
            router,
            _check_path("redoc_path", redoc_path),
            "redoc",
            ("redoc.standalone.js", "redoc-init.js"),
            REDOC_POLICY,
            root="redoc",
            **escaped,
        )
    return router
