"""``examples/site.py`` in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright. The browser reads the precompressed stylesheet,
submits the login form, keeps the session cookie, downloads the report and logs out; and a
login form on another origin (another port of 127.0.0.1, served by this test) is refused by
the site's ``CrossOriginProtection`` with what the browser itself says about the post.

Playwright's synchronous API runs in a worker thread (it brings its own event loop); the
example runs as a script in its own process, as a user would start it."""

from __future__ import annotations

import pathlib
import shutil
import signal
from typing import Any

import pytest
import trio

from trioframe import Response, Router, Server

from ._script import running_example

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "site.py"
REPORT = (EXAMPLE.parent / "site" / "files" / "report.txt").read_bytes()
CHROMIUM = "/usr/bin/chromium"

sync_api: Any = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (a test dependency in noxfile)"
)


def browse(base: str, downloads: pathlib.Path) -> dict[str, Any]:
    """Walk through the site as a user would; return what the browser saw."""
    seen: dict[str, Any] = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_context(accept_downloads=True).new_page()
            page.set_default_timeout(10_000)
            stylesheet = {}
            page.on(
                "response",
                lambda r: stylesheet.update(r.headers) if r.url.endswith("style.css") else None,
            )
            page.goto(base + "/")
            seen["css encoding"] = stylesheet.get("content-encoding")
            seen["body max-width"] = page.eval_on_selector(
                "body", "element => getComputedStyle(element).maxWidth"
            )
            page.fill("input[name=username]", "ada")
            page.fill("input[name=password]", "wrong")
            page.click("button")
            seen["error"] = page.text_content(".error")
            page.fill("input[name=username]", "ada")
            page.fill("input[name=password]", "lovelace")
            page.click("button")
            seen["welcome"] = page.text_content("#welcome")
            seen["cookie flags"] = [
                (cookie["name"], cookie["httpOnly"], cookie["sameSite"])
                for cookie in page.context.cookies()
            ]
            with page.expect_download() as started:
                page.click("#report")
            download = started.value
            seen["download name"] = download.suggested_filename
            target = downloads / download.suggested_filename
            download.save_as(target)
            seen["download"] = target.read_bytes()
            page.click("text=Log out")
            seen["after logout"] = page.locator("input[name=username]").count()
            seen["cookies after logout"] = page.context.cookies()
        finally:
            browser.close()
    return seen


async def test_chromium_logs_in_and_downloads_the_report(tmp_path: pathlib.Path) -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    with trio.fail_after(90):
        async with running_example(EXAMPLE) as (process, port):
            seen = await trio.to_thread.run_sync(browse, f"http://127.0.0.1:{port}", tmp_path)
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
    assert seen["css encoding"] == "gzip"  # the precompressed sibling, decoded by the browser
    assert seen["body max-width"] == "640px"  # 40rem: the stylesheet applied
    assert seen["error"] == "Wrong user or password."
    assert seen["welcome"] == "Hello, ada."
    assert seen["cookie flags"] == [("session", True, "Lax")]
    assert seen["download name"] == "report.txt"
    assert seen["download"] == REPORT
    assert seen["after logout"] == 1  # the login form again
    assert seen["cookies after logout"] == []


#: A page of another origin with the site's login form, valid credentials and all.
FORGED = """<!doctype html><html><body>
<form id="forged" method="post" action="{site}/login">
<input name="username" value="ada"><input name="password" value="lovelace">
<button id="send">Send</button></form></body></html>"""


def post_from_another_origin(site: str, other: str) -> dict[str, Any]:
    """Submit the forged form from ``other``, then the site's own form; what the site answered."""
    seen: dict[str, Any] = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_context().new_page()
            page.set_default_timeout(10_000)
            page.goto(other + "/")
            with page.expect_response(site + "/login") as answered:
                page.click("#send")
            forged = answered.value
            seen["forged status"] = forged.status
            seen["forged message"] = forged.json()["message"]
            seen["forged sec-fetch-site"] = forged.request.all_headers().get("sec-fetch-site")
            seen["cookies after forged"] = page.context.cookies()
            page.goto(site + "/")
            page.fill("input[name=username]", "ada")
            page.fill("input[name=password]", "lovelace")
            with page.expect_response(site + "/login") as answered:
                page.click("button")
            seen["own status"] = answered.value.status
            seen["own sec-fetch-site"] = answered.value.request.all_headers().get("sec-fetch-site")
            seen["welcome"] = page.text_content("#welcome")
        finally:
            browser.close()
    return seen


async def test_chromium_posting_from_another_origin_is_refused() -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    with trio.fail_after(90):
        async with running_example(EXAMPLE) as (process, port):
            site = f"http://127.0.0.1:{port}"

            async def forged_page() -> Response:
                return Response.html(FORGED.format(site=site))

            other = Server(Router().get("/", forged_page), "127.0.0.1:0")
            async with trio.open_nursery() as nursery:
                [(host, other_port)] = await nursery.start(other.serve)
                seen = await trio.to_thread.run_sync(
                    post_from_another_origin, site, f"http://{host}:{other_port}"
                )
                other.shutdown()
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
    # another port of the same host is another origin, though the same site
    assert seen["forged sec-fetch-site"] == "same-site"
    assert seen["forged status"] == 403
    assert "Sec-Fetch-Site is 'same-site'" in seen["forged message"]
    assert seen["cookies after forged"] == []  # the session never opened
    assert seen["own sec-fetch-site"] == "same-origin"
    assert seen["own status"] == 303
    assert seen["welcome"] == "Hello, ada."
