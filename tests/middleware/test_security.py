"""SecurityHeadersMiddleware: defaults, HSTS on https only, options, never overwrite."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from trioframe import ConfigurationError, Method, Request, Response, Router, Uri
from trioframe._chain import Next
from trioframe.middleware import SecurityHeadersMiddleware
from trioframe.testing import TestClient

NAMES = (
    "x-content-type-options",
    "x-frame-options",
    "referrer-policy",
    "strict-transport-security",
)


async def hello() -> Response:
    return Response.text("hi")


async def own_frame_options() -> Response:
    return Response.text("framed").with_header("X-Frame-Options", "SAMEORIGIN")


async def as_https(request: Request, next: Next) -> Response:
    request.scheme = "https"
    return await next(request)


def security(response: httpx.Response) -> dict[str, str]:
    return {name: response.headers[name] for name in NAMES if name in response.headers}


async def get(router: Router, path: str = "/") -> httpx.Response:
    async with TestClient(router) as client:
        return await client.get(path)


async def test_defaults_over_http_leave_out_hsts() -> None:
    response = await get(Router().middleware(SecurityHeadersMiddleware()).get("/", hello))
    assert security(response) == {
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "strict-origin-when-cross-origin",
    }


async def test_hsts_over_https() -> None:
    router = Router().middleware(as_https).middleware(SecurityHeadersMiddleware()).get("/", hello)
    response = await get(router)
    assert response.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"


async def test_hsts_with_a_request_built_directly() -> None:
    async def next_(request: Request) -> Response:
        return Response.text("direct")

    middleware = SecurityHeadersMiddleware(hsts="max-age=600; preload")
    https = Request(method=Method.GET, uri=Uri.parse("/"), scheme="https")
    plain = Request(method=Method.GET, uri=Uri.parse("/"))
    assert (await middleware(https, next_)).header("strict-transport-security") == (
        "max-age=600; preload"
    )
    assert (await middleware(plain, next_)).header("strict-transport-security") is None


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [
        ({"hsts": False}, "strict-transport-security"),
        ({"hsts": None}, "strict-transport-security"),
        ({"frame_options": None}, "x-frame-options"),
        ({"referrer_policy": None}, "referrer-policy"),
        ({"content_type_options": False}, "x-content-type-options"),
    ],
)
async def test_each_header_can_be_turned_off(kwargs: dict[str, Any], missing: str) -> None:
    router = Router().middleware(as_https).middleware(SecurityHeadersMiddleware(**kwargs))
    response = await get(router.get("/", hello))
    assert set(security(response)) == set(NAMES) - {missing}


async def test_custom_values() -> None:
    middleware = SecurityHeadersMiddleware(
        frame_options="sameorigin", referrer_policy="no-referrer, strict-origin"
    )
    response = await get(Router().middleware(middleware).get("/", hello))
    assert response.headers["x-frame-options"] == "SAMEORIGIN"
    assert response.headers["referrer-policy"] == "no-referrer, strict-origin"


async def test_a_header_the_handler_set_is_not_overwritten() -> None:
    router = Router().middleware(SecurityHeadersMiddleware()).get("/", own_frame_options)
    response = await get(router)
    assert response.headers.get_list("x-frame-options") == ["SAMEORIGIN"]
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_framework_errors_get_the_headers() -> None:
    response = await get(Router().middleware(SecurityHeadersMiddleware()).get("/", hello), "/x")
    assert response.status_code == 404
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"frame_options": "ALLOW-FROM https://a.example"},
        {"referrer_policy": "sometimes"},
        {"hsts": "max-age=forever"},
        {"hsts": "max-age=1\r\nx-evil: 1"},
    ],
)
def test_invalid_values_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        SecurityHeadersMiddleware(**kwargs)
