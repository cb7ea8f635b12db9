"""``examples/limits.py``: a 5 MiB upload limit, headers as JSON, one handler for several
methods and paths."""

from __future__ import annotations

import hashlib
import pathlib
import runpy
from collections.abc import AsyncIterator

import httpx
import trio

from tests.rawhttp import connect, raw_server
from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "limits.py"
LIMIT = 5 * 1024 * 1024


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


async def chunked(data: bytes, piece: int = 256 * 1024) -> AsyncIterator[bytes]:
    """``data`` as a streamed body: httpx sends it chunked, with no Content-Length."""
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


def assert_413(response: httpx.Response, message: str) -> None:
    assert response.status_code == 413
    body = response.json()
    assert body["status"] == 413
    assert body["message"] == message


# -- the upload limit ------------------------------------------------------------------------
async def test_upload_of_exactly_5_mib_is_accepted() -> None:
    data = bytes(range(256)) * (LIMIT // 256)
    async with TestClient(load()) as client:
        response = await client.post("/upload", content=data)
        assert response.status_code == 200
        assert response.json() == {"size": LIMIT, "sha256": hashlib.sha256(data).hexdigest()}


async def test_upload_of_5_mib_plus_one_is_413_from_its_content_length() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/upload", content=b"x" * (LIMIT + 1))
        assert_413(
            response, f"Content-Length {LIMIT + 1} is over the upload limit of {LIMIT} bytes"
        )


async def test_a_chunked_upload_is_checked_by_its_real_length() -> None:
    async with TestClient(load()) as client:
        exact = await client.post("/upload", content=chunked(b"y" * LIMIT))
        assert exact.status_code == 200
        assert exact.json()["size"] == LIMIT
        over = await client.post("/upload", content=chunked(b"y" * (LIMIT + 1)))
        assert "content-length" not in over.request.headers
        assert_413(over, f"the body is over the upload limit of {LIMIT} bytes")


async def test_an_empty_upload_is_fine() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/upload")
        assert response.status_code == 200
        assert response.json()["size"] == 0


async def test_a_declared_oversize_body_is_refused_before_it_is_read() -> None:
    # With ``Expect: 100-continue`` the server sends 100 Continue only when something reads
    # the body; the limit check answers first, so the client never has to send it.
    async with raw_server(load()) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(
            b"POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
            b"Content-Length: %d\r\n\r\n" % (LIMIT + 1)
        )
        with trio.fail_after(5):
            raw = await conn.read_until_closed()
        assert raw.startswith(b"HTTP/1.1 413 ")
        assert b"100 Continue" not in raw


async def test_the_server_limit_of_10_mib_still_applies_first() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/upload", content=b"z" * (10 * 1024 * 1024 + 1))
        assert response.status_code == 413
        assert "10485760 bytes" in response.json()["message"]  # the server's, not the route's


# -- headers as JSON -------------------------------------------------------------------------
async def test_headers_come_back_as_json_with_lower_case_names() -> None:
    async with TestClient(load()) as client:
        response = await client.get(
            "/headers",
            headers=[("X-Custom-Header", "Value"), ("X-Tag", "a"), ("x-tag", "b, c")],
        )
        assert response.status_code == 200
        body = response.json()
        assert body["x-custom-header"] == "Value"
        assert body["x-tag"] == "a, b, c"
        assert body["host"] == "testserver"
        assert all(name == name.lower() for name in body)
        assert "X-Custom-Header" not in body


# -- one handler, several methods and paths --------------------------------------------------
async def test_resource_branches_on_the_method() -> None:
    async with TestClient(load()) as client:
        read = await client.get("/resource", params={"a": "1", "b": "two words"})
        assert read.status_code == 200
        assert read.json() == {
            "method": "GET",
            "path": "/resource",
            "query": "a=1&b=two+words",
            "target": "/resource?a=1&b=two+words",
            "action": "read",
        }
        created = await client.post("/resource")
        assert created.status_code == 201
        assert (created.json()["method"], created.json()["action"]) == ("POST", "create")
        replaced = await client.put("/resource")
        assert replaced.status_code == 200
        assert (replaced.json()["method"], replaced.json()["action"]) == ("PUT", "replace")
        head = await client.head("/resource")
        assert head.status_code == 200
        assert head.content == b""


async def test_the_same_handler_branches_on_the_path() -> None:
    async with TestClient(load()) as client:
        archive = await client.get("/archive")
        assert archive.status_code == 200
        assert archive.json()["action"] == "read the archive"
        assert archive.json()["path"] == "/archive"


async def test_put_on_the_read_only_path_is_405_from_the_handler() -> None:
    async with TestClient(load()) as client:
        response = await client.put("/archive")
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, HEAD"
        assert response.json() == {
            "status": 405,
            "error": "Method Not Allowed",
            "message": "PUT is not allowed on /archive: the archive is read-only",
        }


async def test_methods_registered_on_neither_path_get_the_routers_405() -> None:
    async with TestClient(load()) as client:
        resource = await client.delete("/resource")
        assert resource.status_code == 405
        assert resource.headers["allow"] == "GET, HEAD, POST, PUT, OPTIONS"
        archive = await client.post("/archive")
        assert archive.status_code == 405
        assert archive.headers["allow"] == "GET, HEAD, PUT, OPTIONS"
