"""``TestClient(router, tls=True)``: HTTPS in memory, so ``request.scheme``, HSTS and
``Secure`` cookies can be tested without sockets."""

from __future__ import annotations

import pytest

from trioframe import (
    Cookie,
    Request,
    Response,
    Router,
    SecurityHeadersMiddleware,
    WebSocketConnection,
)
from trioframe.testing import TestClient


async def whoami(request: Request) -> Response:
    tls = request.tls
    return Response.json(
        {
            "scheme": request.scheme,
            "version": None if tls is None else tls.version,
            "host": request.header("host"),
            "cookie": request.cookie("session"),
        }
    )


async def login() -> Response:
    return Response.new(204).add_cookie(Cookie("session", "s1").secure().http_only())


async def greet(ws: WebSocketConnection) -> None:
    await ws.send_text("over tls")


ROUTER = (
    Router()
    .middleware(SecurityHeadersMiddleware())
    .get("/", whoami)
    .post("/login", login)
    .websocket("/ws", greet)
)


async def test_requests_are_https_with_the_negotiated_parameters() -> None:
    async with TestClient(ROUTER, tls=True) as client:
        seen = (await client.get("/")).json()
    assert seen["scheme"] == "https"
    assert seen["version"] in ("TLSv1.2", "TLSv1.3")
    assert seen["host"] == "testserver"


@pytest.mark.parametrize(("tls", "hsts"), [(True, True), (False, False)])
async def test_hsts_is_sent_on_https_only(tls: bool, hsts: bool) -> None:
    async with TestClient(ROUTER, tls=tls) as client:
        response = await client.get("/")
    assert ("strict-transport-security" in response.headers) is hsts


@pytest.mark.parametrize(("tls", "sent_back"), [(True, "s1"), (False, None)])
async def test_a_secure_cookie_comes_back_over_https_only(tls: bool, sent_back: str | None) -> None:
    async with TestClient(ROUTER, tls=tls) as client:
        await client.post("/login")
        assert (await client.get("/")).json()["cookie"] == sent_back


async def test_a_custom_base_url_gets_a_certificate_for_its_host() -> None:
    async with TestClient(ROUTER, tls=True, base_url="https://api.example.test") as client:
        assert (await client.get("/")).json()["host"] == "api.example.test"


async def test_websockets_run_over_tls_in_memory() -> None:
    async with TestClient(ROUTER, tls=True) as client, client.websocket("/ws") as ws:
        assert await ws.receive_text() == "over tls"
