"""``request.host``: the host a request is for, whichever way it was named (the ``Host``
header, an HTTP/1.1 absolute-form target, HTTP/2's ``:authority``, a trusted proxy's
forwarding headers), through the real connection code in memory. The loopback tests with
httpx and curl are in ``tests/loopback/test_request_host.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from tests.rawhttp import connect, raw_server
from trioframe import Headers, Method, Request, Response, Router, ServerConfig, Uri
from trioframe.testing import TestClient


async def where(request: Request) -> Response:
    return Response.json(
        {"host": request.host, "header": request.header("host"), "target": str(request.uri)}
    )


ROUTER = Router().get("/{*rest}", where).get("/", where)
TRUSTING = ServerConfig(trusted_proxies=["10.0.0.0/8"])


async def seen(
    path: str = "/",
    headers: dict[str, str] | None = None,
    *,
    config: ServerConfig | None = None,
    **client: Any,
) -> dict[str, Any]:
    async with TestClient(ROUTER, config, **client) as test_client:
        response = await test_client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_the_host_is_the_host_header_or_empty() -> None:
    headers = Headers.from_pairs([("Accept", "*/*"), ("Host", "shop.example:8080")])
    assert Request(Method.of(b"GET"), Uri("/"), headers=headers).host == "shop.example:8080"
    assert Request(Method.of(b"GET"), Uri("/")).host == ""


@pytest.mark.parametrize("http2", [False, True], ids=["http/1.1", "http/2"])
async def test_the_host_the_client_named(http2: bool) -> None:
    """On HTTP/2 the client sends ``:authority`` (httpcore turns the Host into it)."""
    assert (await seen(http2=http2))["host"] == "testserver"
    answer = await seen(http2=http2, base_url="http://shop.example:8080")
    assert answer["host"] == answer["header"] == "shop.example:8080"
    assert (await seen(headers={"host": "[::1]:80"}, http2=http2))["host"] == "[::1]:80"


async def test_an_absolute_form_targets_authority_is_the_host() -> None:
    """RFC 9112 section 3.2.2: the Host header sent along is ignored (on the HTTP/1.1 parser
    the test session chose)."""
    async with raw_server(ROUTER) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET http://other.example:8080/a?b=1 HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await conn.response()).status_code == 200
        assert json.loads(conn.body) == {
            "host": "other.example:8080",
            "header": "other.example:8080",
            "target": "/a?b=1",
        }
        await conn.send(b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n")  # the next one: its own Host
        assert (await conn.response()).status_code == 200
        assert json.loads(conn.body)["host"] == "t"


async def test_without_a_host_the_host_is_empty(autojump_clock: trio.testing.MockClock) -> None:
    async with raw_server(ROUTER) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.0\r\n\r\n")
        raw = await conn.read_until_closed()
    assert raw.startswith(b"HTTP/1.1 200 ")
    assert json.loads(raw.partition(b"\r\n\r\n")[2])["host"] == ""


@pytest.mark.parametrize("http2", [False, True], ids=["http/1.1", "http/2"])
async def test_behind_a_trusted_proxy_the_host_is_the_forwarded_one(http2: bool) -> None:
    forwarded = {"x-forwarded-for": "203.0.113.7", "x-forwarded-host": "shop.example"}
    answer = await seen(headers=forwarded, config=TRUSTING, client=("10.0.0.2", 4000), http2=http2)
    assert answer["host"] == answer["header"] == "shop.example"
    # From a peer that is not trusted, the header is only words.
    answer = await seen(headers=forwarded, config=TRUSTING, client=("192.0.2.9", 4000), http2=http2)
    assert answer["host"] == "testserver"
    # An invalid forwarded host is ignored: the Host the proxy sent stands.
    invalid = {"x-forwarded-host": "shop example"}
    answer = await seen(headers=invalid, config=TRUSTING, client=("10.0.0.2", 4000), http2=http2)
    assert answer["host"] == "testserver"


async def test_behind_a_trusted_proxy_speaking_forwarded() -> None:
    config = TRUSTING.with_proxy_headers("forwarded")
    headers = {"forwarded": 'for=203.0.113.7;host="shop.example:8443";proto=https'}
    answer = await seen(headers=headers, config=config, client=("10.0.0.2", 4000))
    assert answer["host"] == "shop.example:8443"
