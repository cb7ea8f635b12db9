"""``examples/site.py``: a static directory, templated pages, a login form protected against
cross-origin posts, a session and a protected download, in memory and as the script itself
over a real socket (curl as the client)."""

from __future__ import annotations

import gzip
import pathlib
import runpy
import shutil
import signal

import pytest
import trio

from trioframe import Router
from trioframe.testing import TestClient

from ._script import running_example

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "site.py"
SITE = EXAMPLE.parent / "site"
REPORT = (SITE / "files" / "report.txt").read_bytes()
CREDENTIALS = {"username": "ada", "password": "lovelace"}


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


async def test_login_session_download_and_logout() -> None:
    async with TestClient(load()) as client:
        home = await client.get("/")
        assert home.status_code == 200 and 'action="/login"' in home.text
        assert (await client.get("/report")).status_code == 401  # not logged in
        wrong = await client.post("/login", data={"username": "ada", "password": "nope"})
        assert wrong.status_code == 401 and "Wrong user or password" in wrong.text
        assert "session" not in client.cookies
        logged_in = await client.post("/login", data=CREDENTIALS)
        assert logged_in.status_code == 303 and logged_in.headers["location"] == "/"
        assert "HttpOnly" in logged_in.headers["set-cookie"]
        assert 'id="welcome">Hello, ada.' in (await client.get("/")).text
        report = await client.get("/report")
        assert report.status_code == 200 and report.content == REPORT
        assert report.headers["content-disposition"] == 'attachment; filename="report.txt"'
        first_ten = await client.get("/report", headers={"range": "bytes=0-9"})
        assert first_ten.status_code == 206 and first_ten.content == REPORT[:10]
        logged_out = await client.post("/logout")
        assert "Max-Age=0" in logged_out.headers["set-cookie"]
        assert (await client.get("/report")).status_code == 401


async def test_the_pages_escape_what_the_user_typed() -> None:
    async with TestClient(load()) as client:
        wrong = await client.post("/login", data={"username": "<b>x</b>", "password": "nope"})
    assert wrong.status_code == 401
    assert wrong.headers["content-type"] == "text/html; charset=utf-8"
    assert 'value="&lt;b&gt;x&lt;/b&gt;"' in wrong.text and "<b>x" not in wrong.text


async def test_a_cross_origin_login_is_refused() -> None:
    async with TestClient(load()) as client:
        forged = await client.post(
            "/login", data=CREDENTIALS, headers={"sec-fetch-site": "cross-site"}
        )
        assert forged.status_code == 403 and forged.json()["error"] == "Forbidden"
        assert "session" not in client.cookies
        old_browser = await client.post(
            "/login", data=CREDENTIALS, headers={"origin": "http://elsewhere.example"}
        )
        assert old_browser.status_code == 403
        own_page = await client.post(
            "/login",
            data=CREDENTIALS,
            headers={"sec-fetch-site": "same-origin", "origin": "http://testserver"},
        )
        assert own_page.status_code == 303


async def test_the_static_directory() -> None:
    async with TestClient(load()) as client:
        css = await client.get("/static/style.css", headers={"accept-encoding": "gzip"})
        assert css.status_code == 200
        assert css.headers["content-encoding"] == "gzip"  # the precompressed sibling
        assert css.content == (SITE / "static" / "style.css").read_bytes()
        assert gzip.decompress((SITE / "static" / "style.css.gz").read_bytes()) == css.content
        assert css.headers["x-content-type-options"] == "nosniff"
        assert css.headers["cache-control"] == "public, max-age=3600"
        assert (await client.get("/static/../site.py")).status_code == 404


async def test_the_script_serves_the_site_to_curl(tmp_path: pathlib.Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (.ci/run installs it)")
    jar, saved = tmp_path / "cookies.txt", tmp_path / "report.txt"
    with trio.fail_after(20):
        async with running_example(EXAMPLE) as (process, port):
            base = f"http://127.0.0.1:{port}"
            login = await trio.run_process(
                [
                    "curl",
                    "-sS",
                    "-c",
                    str(jar),
                    "-d",
                    "username=ada",
                    "-d",
                    "password=lovelace",
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    base + "/login",
                ],
                capture_stdout=True,
            )
            assert login.stdout == b"303"
            await trio.run_process(
                ["curl", "-sS", "-b", str(jar), "-o", str(saved), base + "/report"]
            )
            assert saved.read_bytes() == REPORT  # sent with sendfile by the real server
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
