"""The built-ins in real chains: order, framework-made responses, nested routers."""

from __future__ import annotations

import gzip
import logging

import pytest
import trio
import trio.testing

from trioframe import Error, Extension, Json, Response, Router, ServerConfig
from trioframe.middleware import (
    CompressionMiddleware,
    Cors,
    LoggerMiddleware,
    RateLimitMiddleware,
    RequestId,
    RequestIdMiddleware,
    SecurityHeadersMiddleware,
    TimeoutMiddleware,
)
from trioframe.testing import TestClient

SITE = "https://app.example"


async def hello() -> Response:
    return Response.text("hi")


async def slow() -> Response:
    await trio.sleep(5)
    return Response.text("late")


@pytest.mark.parametrize(("timeout_first", "logged"), [(True, "cancelled"), (False, "503")])
async def test_first_attached_runs_outermost(
    timeout_first: bool,
    logged: str,
    caplog: pytest.LogCaptureFixture,
    autojump_clock: trio.testing.MockClock,
) -> None:
    caplog.set_level(logging.INFO, logger="trioframe.access")
    timeout, logger = TimeoutMiddleware(1), LoggerMiddleware()
    first, second = (timeout, logger) if timeout_first else (logger, timeout)
    router = Router().middleware(first).middleware(second).get("/", slow)
    async with TestClient(router) as client:
        assert (await client.get("/")).status_code == 503
    [record] = [r for r in caplog.records if r.name == "trioframe.access"]
    assert f'"GET /" {logged} ' in record.getMessage()


async def test_request_id_outside_cors_tags_a_preflight_answer() -> None:
    router = (
        Router()
        .middleware(RequestIdMiddleware())
        .middleware(Cors().allowed_origins([SITE]).build())
        .get("/", hello)
    )
    headers = {"origin": SITE, "access-control-request-method": "GET"}
    async with TestClient(router) as client:
        response = await client.options("/", headers=headers)
    assert response.status_code == 204 and len(response.headers["x-request-id"]) == 32


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/missing", None, 404),
        ("DELETE", "/", None, 405),
        ("POST", "/items", b"x" * 101, 413),
        ("POST", "/items", b'{"a": 1}', 422),
        ("GET", "/boom", None, 500),
        ("GET", "/teapot", None, 418),
    ],
)
async def test_framework_responses_go_through_the_builtins(
    method: str, path: str, body: bytes | None, status: int
) -> None:
    async def items(value: Json[dict[str, str]]) -> Response:
        return Response.json(value)

    async def boom() -> Response:
        raise RuntimeError("boom")

    async def teapot() -> Response:
        raise Error(418, "short and stout")

    router = (
        Router()
        .middleware(Cors().allowed_origins([SITE]).build())
        .middleware(RequestIdMiddleware())
        .middleware(SecurityHeadersMiddleware())
        .middleware(RateLimitMiddleware(100, 1))
        .get("/", hello)
        .post("/items", items)
        .get("/boom", boom)
        .get("/teapot", teapot)
    )
    headers = {"origin": SITE, "content-type": "application/json"}
    async with TestClient(router, ServerConfig(max_body_size=100)) as client:
        response = await client.request(method, path, content=body, headers=headers)
    assert response.status_code == status
    assert response.json()["status"] == status
    assert response.headers["access-control-allow-origin"] == SITE
    assert response.headers["vary"] == "Origin"
    assert len(response.headers["x-request-id"]) == 32
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["ratelimit-limit"] == "100"


async def test_nested_router_middleware_wraps_only_its_routes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    api = (
        Router()
        .middleware(Cors().allow_any_origin().build())  # outside: the 429 gets CORS headers
        .middleware(RateLimitMiddleware(1, per_seconds=60))
        .get("/", hello)
    )
    root = Router().middleware(SecurityHeadersMiddleware()).get("/", hello).nest("/api", api)
    async with TestClient(root) as client:
        tops = [await client.get("/", headers={"origin": SITE}) for _ in range(3)]
        nested = [await client.get("/api", headers={"origin": SITE}) for _ in range(2)]
    assert [r.status_code for r in tops] == [200, 200, 200]
    assert all("access-control-allow-origin" not in r.headers for r in tops)
    assert all("ratelimit-limit" not in r.headers for r in tops)
    assert [r.status_code for r in nested] == [200, 429]
    assert all(r.headers["access-control-allow-origin"] == "*" for r in nested)
    assert all(r.headers["x-frame-options"] == "DENY" for r in tops + nested)


async def test_a_full_stack(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    caplog.set_level(logging.INFO, logger="trioframe.access")

    async def page(request_id: Extension[RequestId]) -> Response:
        return Response.html(f"<p>{request_id}</p>" + " " * 2000)

    router = (
        Router()
        .middleware(LoggerMiddleware())
        .middleware(RequestIdMiddleware())
        .middleware(Cors().allowed_origins([SITE]).build())
        .middleware(CompressionMiddleware())
        .middleware(SecurityHeadersMiddleware())
        .middleware(TimeoutMiddleware(10))
        .get("/", page)
    )
    headers = {"origin": SITE, "accept-encoding": "gzip", "x-request-id": "trace-0001"}
    async with TestClient(router) as client, client.stream("GET", "/", headers=headers) as response:
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert gzip.decompress(raw).startswith(b"<p>trace-0001</p>")
    assert response.headers.get_list("vary") == ["Accept-Encoding", "Origin"]  # inner first
    assert response.headers["access-control-allow-origin"] == SITE
    [record] = [r for r in caplog.records if r.name == "trioframe.access"]
    assert record.getMessage().endswith(f'"GET /" 200 {len(raw)} 0.0ms trace-0001')
