"""Smoke tests with curl as the client: HTTP/1.1, HTTP/1.0 and HEAD."""

from __future__ import annotations

import pytest
import trio

from trioframe import Response, Router

from ._support import serving

pytestmark = pytest.mark.loopback

BODY = "hello from trioframe over curl\n"


async def index() -> Response:
    return Response.text(BODY)


ROUTER = Router().get("/", index)


def _split(output: bytes) -> tuple[str, dict[str, str], bytes]:
    """curl -i output: status line, headers (lower-case names), body."""
    head, _, body = output.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status_line, headers, body


async def _curl(*args: str) -> bytes:
    result = await trio.run_process(["curl", "-s", "--max-time", "5", *args], capture_stdout=True)
    return result.stdout


async def test_curl_get() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            status_line, headers, body = _split(await _curl("-i", served.url + "/"))
    assert status_line.startswith("HTTP/1.1 200")
    assert headers["content-type"].startswith("text/plain")
    assert headers["content-length"] == str(len(BODY.encode()))
    assert body == BODY.encode()


async def test_curl_http_1_0() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            status_line, headers, body = _split(await _curl("--http1.0", "-i", served.url + "/"))
    assert status_line.split(" ")[1] == "200"
    assert body == BODY.encode()
    assert "chunked" not in headers.get("transfer-encoding", "")


async def test_curl_head() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            status_line, headers, body = _split(await _curl("-I", served.url + "/"))
    assert status_line.startswith("HTTP/1.1 200")
    assert headers["content-length"] == str(len(BODY.encode()))
    assert headers["content-type"].startswith("text/plain")
    assert body == b""


async def test_curl_404_has_the_standard_body() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            status_line, headers, body = _split(await _curl("-i", served.url + "/missing"))
    assert status_line.startswith("HTTP/1.1 404")
    assert headers["content-type"].startswith("application/json")
    assert b'"status":404' in body.replace(b" ", b"")
