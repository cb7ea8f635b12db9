"""``request.host`` over real sockets, with httpx and curl as the clients: the Host header,
an absolute-form target (curl as a proxy client, and a target that names another host than
its Host header), HTTP/2's ``:authority``, and a trusted proxy's ``X-Forwarded-Host``."""

from __future__ import annotations

import json

import httpx
import pytest
import trio

from trioframe import Request, Response, Router, ServerConfig

from ._support import serving

pytestmark = pytest.mark.loopback


async def where(request: Request) -> Response:
    return Response.json({"host": request.host, "version": request.version})


ROUTER = Router().get("/", where)


async def _curl(*args: str) -> dict[str, str]:
    result = await trio.run_process(
        ["curl", "-s", "--fail", "--max-time", "5", *args], capture_stdout=True
    )
    answer: dict[str, str] = json.loads(result.stdout)
    return answer


async def test_httpx_names_the_host_and_port() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served, httpx.AsyncClient() as client:
            answer = (await client.get(served.url + "/")).json()
            named = (await client.get(served.url + "/", headers={"host": "shop.example"})).json()
    assert answer == {"host": f"127.0.0.1:{served.port}", "version": "1.1"}
    assert named["host"] == "shop.example"


async def test_curl_with_an_absolute_form_target() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER) as served:
            # As an HTTP proxy's client: the target and the Host header name the same host.
            proxied = await _curl("--proxy", served.url, "http://proxied.example:8080/")
            # A target naming another host than its Host header: the target's wins.
            target = await _curl(
                "--request-target", "http://other.example/", "-H", "Host: t", served.url
            )
            plain = await _curl("-H", "Host: t", served.url + "/")
    assert proxied["host"] == "proxied.example:8080"
    assert target["host"] == "other.example"
    assert plain["host"] == "t"


async def test_curl_over_http2_sends_the_authority() -> None:
    with trio.fail_after(10):
        async with serving(ROUTER, ServerConfig(http2=True)) as served:
            answer = await _curl("--http2-prior-knowledge", served.url + "/")
    assert answer == {"host": f"127.0.0.1:{served.port}", "version": "2"}


async def test_curl_behind_a_trusted_proxy() -> None:
    config = ServerConfig(trusted_proxies=["127.0.0.1"])
    forwarded = ("-H", "X-Forwarded-For: 203.0.113.7", "-H", "X-Forwarded-Host: shop.example")
    with trio.fail_after(10):
        async with serving(ROUTER, config) as served:
            answer = await _curl(*forwarded, served.url + "/")
        async with serving(ROUTER) as served:  # not trusted: the header is only words
            ignored = await _curl(*forwarded, served.url + "/")
    assert answer["host"] == "shop.example"
    assert ignored["host"] == f"127.0.0.1:{served.port}"
