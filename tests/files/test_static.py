"""``Router.static``: containment (each escape tried over a raw socket, so no client
normalizes the path first), index files, precompressed siblings, headers, nesting."""

from __future__ import annotations

import gzip
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from trioframe import ConfigurationError, Router
from trioframe.middleware import CompressionMiddleware
from trioframe.testing import TestClient

from ..loopback._support import Served, fetch, serving, simple_get

APP_JS = b"console.log('hello');\n" * 50
APP_JS_GZ = gzip.compress(APP_JS, mtime=0)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "index.html").write_text("<h1>home</h1>")
    (root / "docs" / "index.html").write_text("<h1>docs</h1>")
    (root / "docs" / "a.txt").write_text("a")
    (root / "app.js").write_bytes(APP_JS)
    (root / "app.js.gz").write_bytes(APP_JS_GZ)
    (root / "app.js.br").write_bytes(b"pretend-brotli")
    (root / ".env").write_text("SECRET=1")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]")
    (root / "empty").mkdir()
    (tmp_path / "outside.txt").write_text("outside")
    (root / "link-out.txt").symlink_to(tmp_path / "outside.txt")
    (root / "link-in.txt").symlink_to(root / "docs" / "a.txt")
    (root / "dir-out").symlink_to(tmp_path)
    return root


@pytest.fixture
async def served(site: Path) -> AsyncIterator[Served]:
    router = Router().static("/static", site, cache_control="max-age=3600")
    async with serving(router) as served:
        yield served


async def get(served: Served, path: str, extra: str = "") -> tuple[int, bytes, dict[str, str]]:
    response, connection = await fetch(served.host, served.port, simple_get(path, extra=extra))
    await connection.aclose()
    return response.status, response.body, {k.lower(): v for k, v in response.headers}


@pytest.mark.parametrize(
    "path",
    [
        "/static/../outside.txt",
        "/static/docs/../../outside.txt",
        "/static/%2e%2e/outside.txt",
        "/static/docs%2f..%2f..%2foutside.txt",
        "/static/docs%2Fa.txt",  # an encoded separator, even to a file that exists
        "/static/docs%5ca.txt",
        "/static/..%5coutside.txt",
        "/static/./index.html",
        "/static//index.html",
        "/static/.env",
        "/static/.git/config",
        "/static/%2egit/config",
        "/static/link-out.txt",  # a symlink out of the directory
        "/static/dir-out/outside.txt",
        "/static/empty/",  # a directory without its index
        "/static/missing.txt",
    ],
)
async def test_escapes_and_hidden_files_are_404(served: Served, path: str) -> None:
    status, body, _ = await get(served, path)
    assert status == 404, (path, body)
    assert b"outside" not in body and b"SECRET" not in body


async def test_an_encoded_nul_is_refused_before_the_file_system(served: Served) -> None:
    status, body, _ = await get(served, "/static/a%00.txt")
    assert status == 400 and b"percent-encoded NUL" in body  # refused with the request head


async def test_files_index_and_headers(served: Served) -> None:
    status, body, headers = await get(served, "/static/docs/a.txt")
    assert (status, body) == (200, b"a")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "max-age=3600"
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["vary"] == "Accept-Encoding"
    assert (await get(served, "/static/"))[1] == b"<h1>home</h1>"
    assert (await get(served, "/static/docs/"))[1] == b"<h1>docs</h1>"
    assert (await get(served, "/static/docs"))[1] == b"<h1>docs</h1>"
    assert (await get(served, "/static/link-in.txt"))[1] == b"a"  # a symlink inside: fine
    status, _, headers = await get(served, "/static")
    assert status == 308 and headers["location"] == "/static/"


async def test_symlinks_out_are_served_when_allowed(site: Path) -> None:
    router = Router().static("/s", site, follow_symlinks=True)
    async with serving(router) as served:
        assert (await get(served, "/s/link-out.txt"))[1] == b"outside"
        assert (await get(served, "/s/dir-out/outside.txt"))[1] == b"outside"
        assert (await get(served, "/s/../outside.txt"))[0] == 404  # ".." still is


@pytest.mark.parametrize(
    ("accept", "coding", "body"),
    [
        ("gzip, br", "br", b"pretend-brotli"),
        ("gzip", "gzip", APP_JS_GZ),
        ("br;q=0, gzip", "gzip", APP_JS_GZ),
        ("*", "br", b"pretend-brotli"),
        ("identity", None, APP_JS),
        ("", None, APP_JS),
    ],
)
async def test_precompressed_siblings(
    served: Served, accept: str, coding: str | None, body: bytes
) -> None:
    extra = f"Accept-Encoding: {accept}\r\n" if accept else ""
    status, got, headers = await get(served, "/static/app.js", extra)
    assert status == 200 and got == body
    assert headers.get("content-encoding") == coding
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    assert headers["vary"] == "Accept-Encoding"


async def test_under_nest_and_with_compression(site: Path) -> None:
    inner = Router().static("/assets", site, precompressed=False)
    router = Router().nest("/v1", inner).middleware(CompressionMiddleware(minimum_size=10))
    async with TestClient(router) as client:
        whole = await client.get("/v1/assets/app.js", headers={"accept-encoding": "gzip"})
        assert whole.headers["content-encoding"] == "gzip" and whole.content == APP_JS
        ranged = await client.get(
            "/v1/assets/app.js", headers={"accept-encoding": "gzip", "range": "bytes=0-6"}
        )
        assert ranged.status_code == 206 and ranged.content == APP_JS[:7]
        assert "content-encoding" not in ranged.headers
    router = Router().static("/s", site).middleware(CompressionMiddleware(minimum_size=10))
    async with TestClient(router) as client:
        pre = await client.get("/s/app.js", headers={"accept-encoding": "gzip"})
        assert pre.headers["content-encoding"] == "gzip"  # the .gz sibling, not compressed again
        assert pre.content == APP_JS


def test_a_missing_directory_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not a directory"):
        Router().static("/s", tmp_path / "nope")


async def test_head_and_ranges_work_on_static_files(site: Path) -> None:
    async with TestClient(Router().static("/static", site)) as client:
        head = await client.head("/static/app.js", headers={"accept-encoding": "identity"})
        assert head.status_code == 200 and head.headers["content-length"] == str(len(APP_JS))
        assert head.content == b""
        ranged = await client.get(
            "/static/app.js", headers={"range": "bytes=0-6", "accept-encoding": "identity"}
        )
        assert ranged.status_code == 206 and ranged.content == APP_JS[:7]


@pytest.fixture
def linked_site(site: Path) -> Path:
    """``site`` with symlinks of every shape: relative, absolute, chained, through ``..``,
    to directories, in loops, into and out of the directory."""
    outside = site.parent / "outside.txt"
    links = {
        "rel-in.txt": "docs/a.txt",
        "chain.txt": "rel-in.txt",
        "docs/up.txt": "../index.html",
        "docs/up-down.txt": "../docs/../docs/a.txt",
        "dir-in": "docs",
        "self": ".",
        "abs-root": str(site),
        "abs-in.txt": str(site / "docs" / "a.txt"),
        "out-and-back.txt": "../site/docs/a.txt",  # leaves the directory by name, comes back
        "docs/esc.txt": "../../outside.txt",
        "docs/deep-esc.txt": "../docs/../../outside.txt",
        "abs-out.txt": str(outside),
        "dir-rel-out": "..",
        "loop-a": "loop-b",
        "loop-b": "loop-a",
        "dangling.txt": "missing.txt",
        "file-as-dir": "app.js/",
        "docs/index-link": "../index.html",
        "app2.js": "app.js",
        "app2.js.gz": str(outside),  # a sibling out of the directory is never sent
        "out.html.gz": "app.js.gz",
    }
    for name, target in links.items():
        (site / name).symlink_to(target)
    (site / "out.html").symlink_to(outside)
    os.mkfifo(site / "pipe")
    return site


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/s/rel-in.txt", b"a"),
        ("/s/chain.txt", b"a"),
        ("/s/docs/up.txt", b"<h1>home</h1>"),
        ("/s/docs/up-down.txt", b"a"),
        ("/s/dir-in/a.txt", b"a"),
        ("/s/dir-in/", b"<h1>docs</h1>"),
        ("/s/self/self/self/docs/a.txt", b"a"),
        ("/s/abs-root/docs/a.txt", b"a"),
        ("/s/abs-root/", b"<h1>home</h1>"),
        ("/s/abs-in.txt", b"a"),
        ("/s/out-and-back.txt", b"a"),
        ("/s/app2.js", APP_JS),
    ],
)
async def test_symlinks_that_stay_inside_are_served(
    linked_site: Path, path: str, body: bytes
) -> None:
    async with TestClient(Router().static("/s", linked_site, precompressed=False)) as client:
        response = await client.get(path)
    assert (response.status_code, response.content) == (200, body)


@pytest.mark.parametrize(
    "path",
    [
        "/s/docs/esc.txt",
        "/s/docs/deep-esc.txt",
        "/s/abs-out.txt",
        "/s/dir-rel-out/outside.txt",
        "/s/dir-rel-out/",
        "/s/loop-a",
        "/s/dangling.txt",
        "/s/file-as-dir",  # a target ending in "/" that is a file
        "/s/out.html",
        "/s/pipe",
        "/s/app.js/x",
    ],
)
async def test_symlinks_out_and_what_is_not_a_file_are_404(linked_site: Path, path: str) -> None:
    async with TestClient(Router().static("/s", linked_site)) as client:
        response = await client.get(path)
    assert response.status_code == 404
    assert response.json()["status"] == 404
    assert b"outside" not in response.content


async def test_precompressed_siblings_are_opened_beneath_the_directory(linked_site: Path) -> None:
    async with TestClient(Router().static("/s", linked_site)) as client:
        gzip_ok = {"accept-encoding": "gzip"}
        app2 = await client.get("/s/app2.js", headers=gzip_ok)  # its .gz: a symlink out
        assert "content-encoding" not in app2.headers and app2.content == APP_JS
        out = await client.get("/s/out.html", headers=gzip_ok)  # a sibling inside, the file out
        assert out.status_code == 404


async def test_an_index_is_opened_beneath_the_directory(linked_site: Path) -> None:
    inside = Router().static("/s", linked_site, index="index-link")
    async with TestClient(inside) as client:
        assert (await client.get("/s/docs/")).content == b"<h1>home</h1>"
        assert (await client.get("/s/")).status_code == 404  # no index-link at the top
    (linked_site / "empty" / "index.html").symlink_to(linked_site.parent / "outside.txt")
    async with TestClient(Router().static("/s", linked_site)) as client:
        assert (await client.get("/s/empty/")).status_code == 404


async def test_follow_symlinks_still_follows_every_link(linked_site: Path) -> None:
    router = Router().static("/s", linked_site, follow_symlinks=True, precompressed=False)
    async with TestClient(router) as client:
        assert (await client.get("/s/docs/esc.txt")).content == b"outside"
        assert (await client.get("/s/abs-out.txt")).content == b"outside"
        assert (await client.get("/s/dir-rel-out/outside.txt")).content == b"outside"
        assert (await client.get("/s/chain.txt")).content == b"a"
        assert (await client.get("/s/loop-a")).status_code == 404
        assert (await client.get("/s/pipe")).status_code == 404
