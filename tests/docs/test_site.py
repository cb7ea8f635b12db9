"""The documentation site as a reader gets it: built from docs/ with the same strict options
as ``nox -s docs`` (into a temporary directory), served on 127.0.0.1 by trioframe's own
``Router.static``, and read in headless Chromium (Debian's ``chromium``, which ``.ci/run``
installs) driven by Playwright. The home page shows its navigation, the client-side search
finds ``url_for``, code blocks carry a copy button, and no page asks another host for
anything (fonts, scripts, analytics): every request the browser makes is recorded.

Playwright's synchronous API runs in a worker thread (it brings its own event loop)."""

from __future__ import annotations

import pathlib
import shutil
import sys
from typing import Any
from urllib.parse import urlsplit

import pytest
import trio

from trioframe import Router

from ..loopback._support import serving

pytestmark = pytest.mark.loopback

DOCS = pathlib.Path(__file__).parents[2] / "docs"
CHROMIUM = "/usr/bin/chromium"
#: Sections of the root toctree, in order (docs/index.md).
SECTIONS = [
    "Tutorial",
    "How-to guides",
    "Explanations",
    "Coming from other frameworks",
    "Reference",
    "Project",
]

pytest.importorskip("sphinx", reason="Sphinx is not installed (docs/requirements.txt)")
sync_api: Any = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (a test dependency in noxfile)"
)


async def build_site(out: pathlib.Path) -> None:
    """``sphinx-build`` as ``nox -s docs`` runs it: a warning fails the test with the log."""
    strict = ["-b", "html", "-W", "--keep-going", "-n", "-q"]
    result = await trio.run_process(
        [
            sys.executable,
            "-m",
            "sphinx",
            *strict,
            "-d",
            str(out.parent / "doctrees"),
            str(DOCS),
            str(out),
        ],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    log = (result.stdout + result.stderr).decode(errors="replace")
    assert result.returncode == 0, f"sphinx-build failed:\n{log}"


def browse(base: str) -> dict[str, Any]:
    """Read the site as a person would; return what the browser saw and every URL it asked."""
    seen: dict[str, Any] = {"requests": []}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            context = browser.new_context()
            context.on("request", lambda request: seen["requests"].append(request.url))
            page = context.new_page()
            page.set_default_timeout(15_000)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))

            page.goto(base + "/")
            seen["title"] = page.title()
            seen["h1"] = page.text_content("article h1")
            seen["captions"] = [
                text.strip() for text in page.locator(".sidebar-tree p.caption").all_text_contents()
            ]
            seen["nav links"] = page.locator(".sidebar-tree a.reference").count()
            page.click(".sidebar-tree a:text-is('Routing')")
            page.wait_for_url("**/routing.html")
            seen["after click"] = page.text_content("article h1")
            seen["copy buttons"] = page.locator("div.highlight button.copybtn").count()
            seen["code blocks"] = page.locator("div.highlight").count()

            page.goto(base + "/search.html?q=url_for")
            page.wait_for_selector("#search-results ul.search li a")
            seen["search hits"] = page.eval_on_selector_all(
                "#search-results ul.search li a", "links => links.map(a => a.href)"
            )
            seen["page errors"] = errors
        finally:
            browser.close()
    return seen


async def test_the_site_reads_in_chromium_without_other_hosts(tmp_path: pathlib.Path) -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    site = tmp_path / "html"
    with trio.fail_after(240):
        await build_site(site)
        async with serving(Router().static("/", site)) as served:
            seen = await trio.to_thread.run_sync(browse, served.url)

    assert seen["title"].startswith("trioframe")
    assert seen["h1"].rstrip("¶ ") == "trioframe"
    assert seen["captions"] == SECTIONS
    assert seen["nav links"] > 30
    assert seen["after click"].rstrip("¶ ") == "Routing"
    assert seen["code blocks"] > 0
    assert seen["copy buttons"] == seen["code blocks"]
    hits = {urlsplit(url).path for url in seen["search hits"]}
    assert "/routing.html" in hits
    assert any(path.startswith("/reference/") for path in hits)
    assert seen["page errors"] == []
    hosts = {urlsplit(url).netloc for url in seen["requests"]}
    assert hosts == {urlsplit(served.url).netloc}, seen["requests"]
