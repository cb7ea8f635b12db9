"""``examples/site.py`` in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright. The browser reads the precompressed stylesheet,
submits the login form, keeps the session cookie, downloads the report and logs out.

Playwright's synchronous API runs in a worker thread (it brings its own event loop); the
example runs as a script in its own process, as a user would start it."""

from __future__ import annotations

import pathlib
import shutil
import signal
from typing import Any

import pytest
import trio

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
