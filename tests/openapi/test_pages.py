"""The documentation pages and their assets, in memory: types, headers, the versioned asset
URLs, what a page leaves out, and the startup errors of ``docs_routes``."""

from __future__ import annotations

import hashlib
import re

import pytest

from trioframe import ConfigurationError, Router, docs_routes, freeze
from trioframe._openapi.pages import ASSETS, REDOC_POLICY, SWAGGER_UI_POLICY
from trioframe.testing import TestClient

IMMUTABLE = "public, max-age=31536000, immutable"


def linked(page: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', page)


async def test_the_swagger_ui_page_links_its_versioned_assets() -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json", title="Pets & <co>")
    async with TestClient(router) as client:
        response = await client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-security-policy"] == SWAGGER_UI_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "<title>Pets &amp; &lt;co&gt;</title>" in response.text
    assert 'data-openapi-url="/openapi.json"' in response.text
    css = hashlib.sha256((ASSETS / "swagger-ui.css").read_bytes()).hexdigest()[:12]
    assert linked(response.text)[0] == f"docs/assets/swagger-ui.{css}.css"
    assert [re.sub(r"\.[0-9a-f]{12}\.", ".", url) for url in linked(response.text)] == [
        "docs/assets/swagger-ui.css",
        "docs/assets/swagger-ui-bundle.js",
        "docs/assets/swagger-init.js",
    ]


async def test_the_redoc_page_has_its_own_policy_and_assets() -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json")
    async with TestClient(router) as client:
        response = await client.get("/redoc")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-security-policy"] == REDOC_POLICY
    assert "<title>API documentation</title>" in response.text
    assert [re.sub(r"\.[0-9a-f]{12}\.", ".", url) for url in linked(response.text)] == [
        "redoc/assets/redoc.standalone.js",
        "redoc/assets/redoc-init.js",
    ]


def test_the_policies_allow_this_origin_only() -> None:
    for policy in (SWAGGER_UI_POLICY, REDOC_POLICY):
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'none'"
        assert directives["script-src"] == "'self'"
        assert directives["connect-src"] == "'self'"
        assert directives["img-src"] == "'self' data:"
        assert "http" not in policy
    assert "'unsafe-inline'" not in SWAGGER_UI_POLICY
    assert "style-src 'self' 'unsafe-inline'; worker-src blob:" in REDOC_POLICY


@pytest.mark.parametrize(
    ("page", "types"),
    [
        ("/docs", ["text/css", "text/javascript", "text/javascript"]),
        ("/redoc", ["text/javascript", "text/javascript"]),
    ],
)
async def test_assets_are_served_immutable_with_their_type(page: str, types: list[str]) -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json")
    async with TestClient(router) as client:
        urls = linked((await client.get(page)).text)
        for url, kind in zip(urls, types, strict=True):
            response = await client.get("/" + url)
            shipped = re.sub(r"\.[0-9a-f]{12}\.", ".", url.rpartition("/")[2])
            assert response.status_code == 200, url
            assert response.headers["content-type"] == f"{kind}; charset=utf-8"
            assert response.headers["cache-control"] == IMMUTABLE
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.content == (ASSETS / shipped).read_bytes()
            digest = hashlib.sha256(response.content).hexdigest()[:12]
            assert f".{digest}." in url
            again = await client.get("/" + url, headers={"if-none-match": response.headers["etag"]})
            assert again.status_code == 304


async def test_an_unknown_or_stale_asset_is_404() -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json")
    async with TestClient(router) as client:
        for url in (
            "/docs/assets/swagger-ui.css",
            "/docs/assets/swagger-ui.000000000000.css",
            "/docs/assets/redoc.standalone.js",
            "/redoc/assets/manifest.json",
        ):
            response = await client.get(url)
            assert response.status_code == 404, url
            assert response.json() == {
                "status": 404,
                "error": "Not Found",
                "message": "file not found",
            }


async def test_swagger_ui_starts_without_the_validator_badge() -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json")
    async with TestClient(router) as client:
        start = linked((await client.get("/docs")).text)[-1]
        script = (await client.get("/" + start)).text
    assert "validatorUrl: null" in script


def test_redoc_asks_no_cdn_for_its_logo() -> None:
    assert b"cdn.redoc.ly" not in (ASSETS / "redoc.standalone.js").read_bytes()


async def test_the_pages_work_under_a_nest_prefix_and_other_paths() -> None:
    api = docs_routes(
        Router(), openapi_url="/api/openapi.json", docs_path="/help/ui", redoc_path="/ref"
    )
    async with TestClient(Router().nest("/api", api)) as client:
        page = await client.get("/api/help/ui")
        assert 'data-openapi-url="/api/openapi.json"' in page.text
        # The relative URLs resolve against the page's own URL.
        for url in linked(page.text):
            assert url.startswith("ui/assets/")
            assert (await client.get("/api/help/" + url)).status_code == 200
        page = await client.get("/api/ref")
        for url in linked(page.text):
            assert (await client.get("/api/" + url)).status_code == 200


async def test_a_page_given_none_is_left_out() -> None:
    router = docs_routes(Router(), openapi_url="/openapi.json", redoc_path=None)
    async with TestClient(router) as client:
        assert (await client.get("/docs")).status_code == 200
        assert (await client.get("/redoc")).status_code == 404
    router = docs_routes(Router(), openapi_url="/openapi.json", docs_path=None)
    assert [route.name for route in freeze(router).routes] == ["redoc", "redoc_assets"]


def test_the_routes_are_named_and_left_out_of_the_schema() -> None:
    routes = freeze(docs_routes(Router(), openapi_url="/openapi.json")).routes
    assert [(route.name, route.path) for route in routes] == [
        ("swagger_ui", "/docs"),
        ("swagger_ui_assets", "/docs/assets/{file}"),
        ("redoc", "/redoc"),
        ("redoc_assets", "/redoc/assets/{file}"),
    ]
    assert not any(route.include_in_schema for route in routes)


@pytest.mark.parametrize("path", ["docs", "/docs/", "/", "/docs/{version}"])
def test_a_bad_page_path_is_a_configuration_error(path: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        docs_routes(Router(), openapi_url="/openapi.json", docs_path=path)
    assert str(raised.value) == (
        "docs_routes(): docs_path must start with '/', not end with '/' and hold no "
        f"{{parameter}}, such as '/docs'; got {path!r}"
    )


@pytest.mark.parametrize("url", ["", None])
def test_a_missing_openapi_url_is_a_configuration_error(url: object) -> None:
    with pytest.raises(ConfigurationError) as raised:
        docs_routes(Router(), openapi_url=url)  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"docs_routes(): openapi_url must be the document's URL, such as '/openapi.json'; "
        f"got {url!r}"
    )
