"""``request.url_for`` over a real socket behind a trusted proxy: the URL carries the scheme
and host the proxy forwarded (``X-Forwarded-Proto``, ``X-Forwarded-Host``), and only when
the proxy is trusted."""

from __future__ import annotations

import httpx
import pytest
import trio

from trioframe import Path, Request, Response, Router, ServerConfig

from ._support import serving

pytestmark = pytest.mark.loopback


async def get_item(item_id: Path[int]) -> Response:
    return Response.text(f"item {item_id}")


async def link(request: Request) -> Response:
    return Response.text(request.url_for("shop.get_item", item_id=12))


ROUTER = (
    Router().get("/link", link).nest("/shop", Router().get("/{item_id}", get_item), name="shop")
)
FORWARDED = {"x-forwarded-proto": "https", "x-forwarded-host": "shop.example"}


async def test_the_url_names_the_public_scheme_and_host_behind_a_trusted_proxy() -> None:
    trusting = ServerConfig(trusted_proxies=["127.0.0.1"])
    with trio.fail_after(10):
        async with serving(ROUTER, trusting) as served, httpx.AsyncClient() as client:
            public = (await client.get(served.url + "/link", headers=FORWARDED)).text
            direct = (await client.get(served.url + "/link")).text
            reached = (await client.get(served.url + httpx.URL(public).raw_path.decode())).text
        async with serving(ROUTER) as untrusting, httpx.AsyncClient() as client:
            ignored = (await client.get(untrusting.url + "/link", headers=FORWARDED)).text
    assert public == "https://shop.example/shop/12"
    assert direct == f"http://127.0.0.1:{served.port}/shop/12"
    assert reached == "item 12"
    assert ignored == f"http://127.0.0.1:{untrusting.port}/shop/12"
