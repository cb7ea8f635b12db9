"""The app's side of a request is the same over HTTP/2 as over HTTP/1.1: routing,
extractors, middleware and the standard error bodies, each test run over both through the
in-memory ``TestClient`` (``http2=True`` uses httpx's own HTTP/2 client)."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import attrs
import pytest

from tests.app.helpers import assert_error_body
from trioframe import (
    Cookies,
    Error,
    Form,
    Headers,
    Json,
    Path,
    Query,
    Request,
    Response,
    Router,
    ServerConfig,
)
from trioframe.middleware import Cors, LoggerMiddleware
from trioframe.testing import TestClient


@pytest.fixture(params=[False, True], ids=["http1.1", "http2"])
def http2(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


def expected_version(http2: bool) -> str:
    return "HTTP/2" if http2 else "HTTP/1.1"


@attrs.define
class Filters:
    page: int = 1
    tags: list[str] = attrs.Factory(list)


@dataclasses.dataclass
class Item:
    name: str
    price: float


async def get_post(user_id: Path[int], post_id: Path[str], request: Request) -> Response:
    return Response.json({"user": user_id, "post": post_id, "version": request.version})


async def search(filters: Query[Filters]) -> Response:
    return Response.json({"page": filters.page, "tags": filters.tags})


async def create(item: Json[Item]) -> Response:
    return Response.json({"name": item.name, "price": item.price}, status=201)


async def submit(item: Form[Item]) -> Response:
    return Response.json({"name": item.name, "price": item.price})


async def headers_and_cookies(headers: Headers, cookies: Cookies) -> Response:
    return Response.json(
        {
            "cookie": headers.get_all("cookie"),
            "jar": {name: cookies.get(name) for name in ("a", "b", "c")},
            "token": headers.get_all("x-token"),
            "host": headers.get("host"),
        }
    )


async def fails() -> Response:
    raise RuntimeError("boom")


async def conflict() -> Response:
    raise Error.conflict("taken")


ROUTER = (
    Router()
    .get("/users/{user_id}/posts/{post_id}", get_post)
    .get("/search", search)
    .post("/items", create)
    .put("/items", create)
    .post("/form", submit)
    .get("/echo-headers", headers_and_cookies)
    .get("/docs/", search)
    .get("/fail", fails)
    .get("/conflict", conflict)
)


# -- routing ------------------------------------------------------------------------------------
async def test_path_parameters(http2: bool) -> None:
    async with TestClient(ROUTER, http2=http2) as client:
        response = await client.get("/users/7/posts/h%C3%A9llo")
    assert response.http_version == expected_version(http2)
    assert response.json() == {"user": 7, "post": "héllo", "version": "2" if http2 else "1.1"}


async def test_404_405_and_308(http2: bool) -> None:
    async with TestClient(ROUTER, http2=http2) as client:
        missing = await client.get("/nowhere")
        wrong_method = await client.delete("/items")
        redirect = await client.get("/docs?page=2")
        followed = await client.get("/docs?page=2", follow_redirects=True)
    assert_error_body(missing, 404)
    assert_error_body(wrong_method, 405)
    assert wrong_method.headers["allow"] == "POST, PUT, OPTIONS"
    assert redirect.status_code == 308
    assert redirect.headers["location"] == "/docs/?page=2"
    assert redirect.content == b""
    assert followed.json() == {"page": 2, "tags": []}
    assert {r.http_version for r in (missing, wrong_method, redirect, followed)} == {
        expected_version(http2)
    }


# -- extractors ---------------------------------------------------------------------------------
async def test_query_json_and_form(http2: bool) -> None:
    async with TestClient(ROUTER, http2=http2) as client:
        query = await client.get("/search?page=3&tags=a&tags=b")
        created = await client.post("/items", json={"name": "pen", "price": 1.5})
        form = await client.post("/form", data={"name": "ink", "price": "2"})
        invalid = await client.post("/items", json={"name": "pen"})
        bad_query = await client.get("/search?page=x")
        not_json = await client.post(
            "/items", content=b"{", headers={"content-type": "application/json"}
        )
    assert query.json() == {"page": 3, "tags": ["a", "b"]}
    assert (created.status_code, created.json()) == (201, {"name": "pen", "price": 1.5})
    assert form.json() == {"name": "ink", "price": 2.0}
    assert assert_error_body(invalid, 422)["errors"] == ["body.price: required"]
    assert assert_error_body(bad_query, 400)["errors"] == ["query.page: expected an integer"]
    assert_error_body(not_json, 400)
    assert {r.http_version for r in (query, created, form, invalid)} == {expected_version(http2)}


async def test_headers_and_cookies(http2: bool) -> None:
    """Over HTTP/2 a client may send each cookie in its own field (RFC 9113 8.2.3): the app
    sees them joined into one ``Cookie`` header, as an HTTP/1.1 client sends them."""
    if http2:
        cookies = [("cookie", "a=1"), ("cookie", "b=2"), ("cookie", "c=3")]
    else:
        cookies = [("cookie", "a=1; b=2; c=3")]
    headers = [*cookies, ("x-token", "one"), ("x-token", "two")]
    async with TestClient(ROUTER, http2=http2) as client:
        response = await client.get("/echo-headers", headers=headers)
    assert response.http_version == expected_version(http2)
    assert response.json() == {
        "cookie": ["a=1; b=2; c=3"],
        "jar": {"a": "1", "b": "2", "c": "3"},
        "token": ["one", "two"],
        "host": "testserver",
    }


# -- the standard error body --------------------------------------------------------------------
async def test_error_bodies(http2: bool) -> None:
    config = ServerConfig(max_body_size=100)
    async with TestClient(ROUTER, config, http2=http2) as client:
        answers: dict[int, Any] = {
            400: await client.post(
                "/items", content=b"[", headers={"content-type": "application/json"}
            ),
            404: await client.get("/missing"),
            409: await client.get("/conflict"),
            413: await client.post("/items", json={"name": "x" * 200, "price": 1}),
            422: await client.post("/items", json={"price": 1}),
            500: await client.get("/fail"),
        }
    for status, response in answers.items():
        assert response.http_version == expected_version(http2)
        assert_error_body(response, status)
        assert response.headers["content-length"] == str(len(response.content))
    assert answers[500].json()["message"] == "Internal Server Error"  # nothing of "boom"


# -- middleware ---------------------------------------------------------------------------------
async def test_logging_middleware(http2: bool, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="trioframe.access")
    router = Router().middleware(LoggerMiddleware()).get("/search", search)
    async with TestClient(router, http2=http2) as client:
        await client.get("/search?page=2")
        await client.get("/missing")
    lines = [r.getMessage() for r in caplog.records if r.name == "trioframe.access"]
    assert [line.rsplit(" ", 3)[0] for line in lines] == [
        '127.0.0.1:50000 "GET /search" 200',
        '127.0.0.1:50000 "GET /missing" 404',
    ]


async def test_cors_preflight_and_simple_request(http2: bool) -> None:
    cors = (
        Cors()
        .allowed_origins(["https://app.example"])
        .allowed_methods(["GET", "PUT"])
        .allowed_headers(["x-token"])
        .build()
    )
    router = Router().middleware(cors).get("/search", search).put("/items", create)
    preflight = {
        "origin": "https://app.example",
        "access-control-request-method": "PUT",
        "access-control-request-headers": "x-token",
    }
    async with TestClient(router, http2=http2) as client:
        answer = await client.options("/items", headers=preflight)
        simple = await client.get("/search", headers={"origin": "https://app.example"})
    assert answer.http_version == expected_version(http2)
    assert (answer.status_code, answer.content) == (204, b"")
    assert answer.headers["access-control-allow-origin"] == "https://app.example"
    assert answer.headers["access-control-allow-methods"] == "GET, PUT"
    assert answer.headers["access-control-allow-headers"] == "x-token"
    assert simple.headers["access-control-allow-origin"] == "https://app.example"


async def test_tls_in_memory_negotiates_the_protocol_by_alpn(http2: bool) -> None:
    async def tls_info(request: Request) -> Response:
        assert request.tls is not None
        return Response.json({"alpn": request.tls.alpn_protocol, "version": request.version})

    async with TestClient(Router().get("/", tls_info), tls=True, http2=http2) as client:
        response = await client.get("/")
    assert response.http_version == expected_version(http2)
    expected = {"alpn": "h2", "version": "2"} if http2 else {"alpn": "http/1.1", "version": "1.1"}
    assert response.json() == expected
