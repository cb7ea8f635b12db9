"""The documentation pages in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright opens ``/docs`` and ``/redoc`` of an app served on
127.0.0.1, sees the operations of a small hand-written OpenAPI document, and records every
request the pages make and every Content-Security-Policy violation they report.

The browser context aborts any request that is not for 127.0.0.1, so nothing leaves the
machine even if a page tried; such a request is still recorded and fails the test."""

from __future__ import annotations

import shutil
from typing import Any
from urllib.parse import urlsplit

import pytest
import trio

from trioframe import Response, Router
from trioframe._openapi.pages import docs_routes

from ..loopback._support import serving

CHROMIUM = "/usr/bin/chromium"

sync_api: Any = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (a test dependency in noxfile)"
)

DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1.0"},
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List the pets",
                "responses": {"200": {"description": "the pets"}},
            },
            "post": {
                "operationId": "createPet",
                "summary": "Add a pet",
                "responses": {"201": {"description": "the new pet"}},
            },
        }
    },
}


async def openapi() -> Response:
    return Response.json(DOCUMENT)


def browse(base: str) -> dict[str, Any]:
    """Open both pages; return the requested URLs, the CSP reports and what each page shows."""
    seen: dict[str, Any] = {"requests": [], "violations": []}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            context = browser.new_context()
            context.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if urlsplit(route.request.url).hostname == "127.0.0.1"
                    else route.abort()
                ),
            )
            context.on("request", lambda request: seen["requests"].append(request.url))
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.on(
                "console",
                lambda message: (
                    seen["violations"].append(message.text)
                    if "Content Security Policy" in message.text
                    else None
                ),
            )
            page.goto(base + "/docs")
            page.wait_for_selector("#operations-default-listPets")
            seen["swagger"] = page.inner_text("#swagger-ui")
            seen["validator badges"] = page.locator(".validator-badge, img[src*=validator]").count()
            page.goto(base + "/redoc")
            page.wait_for_selector("text=Add a pet")
            seen["redoc"] = page.inner_text("#redoc")
            page.fill("input[placeholder='Search...']", "pet")  # a worker from blob:
            page.wait_for_selector("[data-role='search:results'] li")
            seen["search results"] = page.locator("[data-role='search:results'] li").count()
        finally:
            browser.close()
    return seen


async def test_chromium_shows_the_operations_and_asks_no_other_host() -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    router = docs_routes(Router().get("/openapi.json", openapi), openapi_url="/openapi.json")
    with trio.fail_after(90):
        async with serving(router) as served:
            seen = await trio.to_thread.run_sync(browse, served.url)
    assert "List the pets" in seen["swagger"]
    assert "Add a pet" in seen["swagger"]
    assert seen["validator badges"] == 0
    assert "List the pets" in seen["redoc"]
    assert "Add a pet" in seen["redoc"]
    assert seen["search results"] == 2
    hosts = {urlsplit(url).hostname for url in seen["requests"]}
    assert hosts == {"127.0.0.1"}, seen["requests"]
    assert seen["violations"] == []
    assert f"{served.url}/openapi.json" in seen["requests"]
