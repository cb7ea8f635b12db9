"""Cors / CorsMiddleware: builder checks, preflights, headers on real responses."""

from __future__ import annotations

import httpx
import pytest

from tests.app.helpers import assert_error_body
from trioframe import ConfigurationError, Error, Method, Response, Router
from trioframe.middleware import Cors, CorsMiddleware
from trioframe.testing import TestClient

SITE = "https://app.example"
OTHER = "https://evil.example"

handled: list[str] = []


async def hello() -> Response:
    handled.append("hello")
    return Response.text("hi").with_header("x-total", "3")


async def varies() -> Response:
    return Response.text("v").with_header("vary", "Accept-Encoding")


async def fails() -> Response:
    raise Error.conflict("taken")


def app(cors: CorsMiddleware) -> Router:
    handled.clear()
    return (
        Router()
        .middleware(cors)
        .get("/items", hello)
        .options("/items", hello)
        .get("/varies", varies)
        .post("/fail", fails)
    )


def strict() -> CorsMiddleware:
    return (
        Cors()
        .allowed_origins([SITE, "http://localhost:3000"])
        .allowed_methods([Method.GET, "PUT", Method.DELETE])
        .allowed_headers(["Content-Type", "x-token"])
        .expose_headers(["X-Total"])
        .allow_credentials()
        .max_age(600)
        .build()
    )


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def preflight(origin: str, method: str, headers: str | None = None) -> dict[str, str]:
    out = {"origin": origin, "access-control-request-method": method}
    if headers is not None:
        out["access-control-request-headers"] = headers
    return out


# -- build() ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("builder", "match"),
    [
        (Cors(), "allow_any_origin"),
        (Cors().allowed_origins([]), "allow_any_origin"),
        (Cors().allow_any_origin().allow_credentials(), "credentials"),
        (Cors().allowed_origins(["*"]), "allow_any_origin"),
        (Cors().allowed_origins(["https://app.example/"]), "trailing slash"),
        (Cors().allowed_origins(["https://App.example"]), "lower-case"),
        (Cors().allowed_origins(["https://app.example:443"]), "default port"),
        (Cors().allowed_origins(["app.example"]), "scheme"),
        (Cors().allowed_origins([SITE]).allowed_methods(["get"]), "'GET'"),
        (Cors().allowed_origins([SITE]).allowed_methods(["BAD METHOD"]), "method"),
        (Cors().allowed_origins([SITE]).allowed_headers(["*"]), "'\\*'"),
        (Cors().allowed_origins([SITE]).allowed_headers(["x y"]), "header"),
    ],
)
def test_build_refuses_bad_configuration(builder: Cors, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        builder.build()


def test_builder_refuses_a_string_for_a_list_and_bad_max_age() -> None:
    with pytest.raises(ConfigurationError, match="list"):
        Cors().allowed_origins(SITE)
    with pytest.raises(ConfigurationError, match="max_age"):
        Cors().max_age(-1)


# -- preflight ------------------------------------------------------------------------------
async def test_preflight_is_answered_by_the_middleware() -> None:
    async with TestClient(app(strict())) as client:
        response = await client.options("/items", headers=preflight(SITE, "PUT", "X-Token"))
        unrouted = await client.options("/nowhere", headers=preflight(SITE, "DELETE"))
    assert response.status_code == 204 and response.content == b""
    assert cors_headers(response) == {
        "access-control-allow-origin": SITE,
        "access-control-allow-methods": "GET, PUT, DELETE",
        "access-control-allow-headers": "x-token",
        "access-control-max-age": "600",
        "access-control-allow-credentials": "true",
    }
    assert response.headers["vary"] == (
        "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
    )
    assert handled == []  # the OPTIONS route never ran
    assert unrouted.status_code == 204
    assert "access-control-allow-headers" not in unrouted.headers


async def test_preflight_with_any_origin_answers_star() -> None:
    cors = Cors().allow_any_origin().allowed_headers(["content-type"]).build()
    async with TestClient(app(cors)) as client:
        response = await client.options("/items", headers=preflight(OTHER, "POST", "content-type"))
    assert response.status_code == 204
    assert cors_headers(response) == {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, HEAD, POST",
        "access-control-allow-headers": "content-type",
    }


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        (preflight(OTHER, "PUT"), "origin is not allowed"),
        (preflight("https://APP.example", "PUT"), "origin is not allowed"),
        (preflight("https://app.example:8443", "PUT"), "origin is not allowed"),
        (preflight("null", "PUT"), "origin is not allowed"),
        (preflight(SITE, "PATCH"), "method PATCH is not allowed"),
        (preflight(SITE, "put"), "method put is not allowed"),
        (preflight(SITE, "GET", "x-token, x-other"), "header x-other is not allowed"),
    ],
)
async def test_refused_preflight_is_403_without_cors_headers(
    headers: dict[str, str], reason: str
) -> None:
    async with TestClient(app(strict())) as client:
        response = await client.options("/items", headers=headers)
    assert_error_body(response, 403, f"CORS preflight refused: {reason}")
    assert cors_headers(response) == {}
    assert handled == []


async def test_null_origin_only_when_listed() -> None:
    anyone = Cors().allow_any_origin().build()
    listed = Cors().allowed_origins(["null"]).build()
    async with TestClient(app(anyone)) as client:
        assert (await client.options("/items", headers=preflight("null", "GET"))).status_code == 403
        real = await client.get("/items", headers={"origin": "null"})
        assert cors_headers(real) == {}
    async with TestClient(app(listed)) as client:
        ok = await client.options("/items", headers=preflight("null", "GET"))
        assert ok.status_code == 204 and ok.headers["access-control-allow-origin"] == "null"


async def test_options_without_request_method_is_not_a_preflight() -> None:
    async with TestClient(app(strict())) as client:
        response = await client.options("/items", headers={"origin": SITE})
    assert handled == ["hello"]
    assert response.headers["access-control-allow-origin"] == SITE


# -- real responses ---------------------------------------------------------------------------
async def test_allowed_origin_is_echoed_with_vary_expose_and_credentials() -> None:
    async with TestClient(app(strict())) as client:
        response = await client.get("/items", headers={"origin": "http://localhost:3000"})
    assert response.text == "hi"
    assert cors_headers(response) == {
        "access-control-allow-origin": "http://localhost:3000",
        "access-control-expose-headers": "x-total",
        "access-control-allow-credentials": "true",
    }
    assert response.headers["vary"] == "Origin"


async def test_any_origin_answers_star_without_credentials() -> None:
    cors = Cors().allow_any_origin().build()
    async with TestClient(app(cors)) as client:
        response = await client.get("/items", headers={"origin": OTHER})
    assert cors_headers(response) == {"access-control-allow-origin": "*"}


async def test_vary_is_added_to_an_existing_vary_not_duplicated() -> None:
    async def already() -> Response:
        return Response.text("x").with_header("vary", "accept-encoding, origin")

    async with TestClient(app(strict()).get("/already", already)) as client:
        varied = await client.get("/varies", headers={"origin": SITE})
        same = await client.get("/already", headers={"origin": SITE})
    assert varied.headers.get_list("vary") == ["Accept-Encoding", "Origin"]
    assert same.headers.get_list("vary") == ["accept-encoding, origin"]


async def test_error_responses_get_cors_headers() -> None:
    async with TestClient(app(strict())) as client:
        for method, path, status in (("POST", "/fail", 409), ("GET", "/nope", 404)):
            response = await client.request(method, path, headers={"origin": SITE})
            assert response.status_code == status
            assert response.headers["access-control-allow-origin"] == SITE


async def test_disallowed_origin_gets_the_response_without_cors_headers() -> None:
    async with TestClient(app(strict())) as client:
        response = await client.get("/items", headers={"origin": OTHER})
    assert response.text == "hi" and handled == ["hello"]
    assert cors_headers(response) == {}
    assert response.headers["vary"] == "Origin"


async def test_a_request_without_origin_only_gets_vary() -> None:
    async with TestClient(app(strict())) as client:
        response = await client.get("/items")
        options = await client.options("/items", headers={"access-control-request-method": "GET"})
    assert cors_headers(response) == {} and response.headers["vary"] == "Origin"
    assert handled == ["hello", "hello"]  # OPTIONS without Origin reached its route
    assert cors_headers(options) == {}


async def test_a_handler_set_allow_origin_is_replaced() -> None:
    async def own() -> Response:
        return Response.text("x").with_header("access-control-allow-origin", "*")

    async with TestClient(app(strict()).get("/own", own)) as client:
        response = await client.get("/own", headers={"origin": SITE})
    assert response.headers.get_list("access-control-allow-origin") == [SITE]
