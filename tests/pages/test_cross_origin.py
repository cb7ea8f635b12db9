"""CrossOriginProtection: every branch of the rule (safe methods, Sec-Fetch-Site, Origin
against Host, neither header), trusted origins, bypassed routes, and their validation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from trioframe import ConfigurationError, CrossOriginProtection, Response, Router
from trioframe.testing import TestClient

HOST = "shop.example:8000"


async def changed() -> Response:
    return Response.text("changed")


def app(protection: CrossOriginProtection | None = None) -> Router:
    router = Router().middleware(protection or CrossOriginProtection())
    for method in ("get", "head", "options", "post", "put", "patch", "delete"):
        getattr(router, method)("/things", changed)
    router.post("/webhooks/{name}", changed)
    return router


async def send(
    method: str,
    headers: dict[str, str],
    *,
    path: str = "/things",
    protection: CrossOriginProtection | None = None,
) -> httpx.Response:
    async with TestClient(app(protection)) as client:
        return await client.request(method, path, headers={"host": HOST, **headers})


def refused(response: httpx.Response, because: str) -> bool:
    body: dict[str, Any] = response.json()
    return (
        response.status_code == 403
        and body["error"] == "Forbidden"
        and body["message"].startswith("cross-origin request refused: ")
        and because in body["message"]
    )


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
async def test_safe_methods_always_pass(method: str) -> None:
    headers = {"sec-fetch-site": "cross-site", "origin": "https://evil.example"}
    assert (await send(method, headers)).status_code == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_unsafe_methods_from_another_site_are_refused(method: str) -> None:
    response = await send(method, {"sec-fetch-site": "cross-site"})
    assert refused(response, "Sec-Fetch-Site is 'cross-site'")


@pytest.mark.parametrize("site", ["same-origin", "none", "Same-Origin"])
async def test_same_origin_or_user_started_requests_pass(site: str) -> None:
    # even with an Origin that does not match: Sec-Fetch-Site decides when present
    headers = {"sec-fetch-site": site, "origin": "https://elsewhere.example"}
    assert (await send("POST", headers)).status_code == 200


async def test_same_site_is_not_same_origin() -> None:
    response = await send("POST", {"sec-fetch-site": "same-site"})
    assert refused(response, "Sec-Fetch-Site is 'same-site'")


async def test_neither_header_is_not_a_browser_and_passes() -> None:
    assert (await send("POST", {})).status_code == 200


@pytest.mark.parametrize(
    "origin", [f"http://{HOST}", f"https://{HOST}", "http://SHOP.Example:8000"]
)
async def test_without_sec_fetch_site_an_origin_matching_host_passes(origin: str) -> None:
    assert (await send("POST", {"origin": origin})).status_code == 200


@pytest.mark.parametrize(
    "origin",
    [
        "null",
        "http://shop.example",  # no port: another origin
        "http://shop.example:8001",  # another port
        "http://evil.example:8000",
        "http://shop.example:8000/path",
        "not an origin",
    ],
)
async def test_without_sec_fetch_site_another_origin_is_refused(origin: str) -> None:
    response = await send("POST", {"origin": origin})
    assert refused(response, f"Origin {origin!r} does not match Host {HOST!r}")


async def test_a_trusted_origin_passes_either_way() -> None:
    protection = CrossOriginProtection(trusted_origins=["https://admin.example"])
    for headers in (
        {"sec-fetch-site": "cross-site", "origin": "https://admin.example"},
        {"origin": "https://admin.example"},
    ):
        assert (await send("POST", headers, protection=protection)).status_code == 200
    # exact: another scheme, port or case is not the trusted origin
    for origin in ("http://admin.example", "https://admin.example:444", "https://ADMIN.example"):
        headers = {"sec-fetch-site": "cross-site", "origin": origin}
        assert (await send("POST", headers, protection=protection)).status_code == 403


async def test_a_bypassed_route_pattern_passes() -> None:
    protection = CrossOriginProtection(bypass=["/webhooks/{name}"])
    headers = {"sec-fetch-site": "cross-site", "origin": "https://hooks.example"}
    hook = await send("POST", headers, path="/webhooks/github", protection=protection)
    assert hook.status_code == 200
    # other routes are still protected, and the pattern is matched, not the path
    assert (await send("POST", headers, protection=protection)).status_code == 403
    by_path = CrossOriginProtection(bypass=["/webhooks/github"])
    assert (await send("POST", headers, path="/webhooks/github", protection=by_path)).is_error


async def test_a_refused_request_never_reaches_the_handler() -> None:
    calls: list[str] = []

    async def record() -> Response:
        calls.append("handler")
        return Response.text("ok")

    router = Router().middleware(CrossOriginProtection()).post("/", record)
    async with TestClient(router) as client:
        response = await client.post("/", headers={"sec-fetch-site": "cross-site"})
    assert response.status_code == 403 and calls == []


@pytest.mark.parametrize(
    "origin",
    [
        "https://app.example/",
        "https://app.example/path",
        "https://App.example",
        "https://app.example:443",
        "http://app.example:80",
        "ftp://app.example",
        "app.example",
        "https://user@app.example",
        "https://app.example:notaport",
        "null",
        "*",
    ],
)
def test_a_malformed_trusted_origin_is_a_configuration_error(origin: str) -> None:
    with pytest.raises(ConfigurationError, match="not an origin as browsers send it"):
        CrossOriginProtection(trusted_origins=[origin])


def test_valid_trusted_origins() -> None:
    CrossOriginProtection(
        trusted_origins=["https://app.example", "http://127.0.0.1:8080", "https://[::1]:8443"]
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trusted_origins": "https://app.example"}, "not the string"),
        ({"bypass": "/webhooks"}, "not the string"),
        ({"bypass": ["webhooks"]}, "must start with '/'"),
        ({"bypass": ["/a/{b"]}, "/a/{b"),
        ({"bypass": [42]}, "must be a str"),
        ({"trusted_origins": [42]}, "must be a str"),
    ],
)
def test_malformed_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("{", r"\{")):
        CrossOriginProtection(**kwargs)
