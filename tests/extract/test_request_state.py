"""``request.state(T)``: the state value ``State[T]`` gives the matched route, from a
middleware and from a ``FromRequest``; nested routers with their own state; requests no route
answers; none registered → ``LookupError``, a 500."""

from __future__ import annotations

import logging

import pytest

from trioframe import FromRequest, Next, Request, Response, Router, State
from trioframe.testing import TestClient


class Settings:
    def __init__(self, name: str) -> None:
        self.name = name


class LocalSettings(Settings):
    pass


class Cache:
    def __init__(self, name: str) -> None:
        self.name = name


async def seen_by_middleware(request: Request, next: Next) -> Response:
    response = await next(request)
    return response.with_header("x-settings", request.state(Settings).name)


async def test_middleware_sees_the_matched_routes_state_as_state_t_does() -> None:
    async def handler(settings: State[Settings], cache: State[Cache]) -> Response:
        return Response.json([settings.name, cache.name])

    inner = Router().state(Cache("inner cache")).get("/", handler)
    router = Router().middleware(seen_by_middleware).state(Settings("root")).nest("/inner", inner)
    async with TestClient(router) as client:
        response = await client.get("/inner")
    assert response.json() == ["root", "inner cache"]
    assert response.headers["x-settings"] == "root"


async def test_nested_routers_each_see_their_own_state() -> None:
    async def cache_name(request: Request) -> Response:
        return Response.text(request.state(Cache).name)

    async def settings_name(request: Request) -> Response:
        return Response.text(request.state(Settings).name)

    first = Router().state(Cache("first")).get("/", cache_name)
    second = Router().state(Cache("second")).state(LocalSettings("local")).get("/", settings_name)
    router = (
        Router()
        .state(Settings("root"))
        .get("/", settings_name)
        .nest("/first", first)
        .nest("/second", second)
    )
    async with TestClient(router) as client:
        assert (await client.get("/first")).text == "first"
        # The outermost router's value comes first, as for State[T].
        assert (await client.get("/second")).text == "root"
        assert (await client.get("/")).text == "root"


async def test_a_subclass_instance_answers_for_its_base_class() -> None:
    async def handler(request: Request, settings: State[Settings]) -> Response:
        found = request.state(Settings)
        return Response.json([found.name, found is settings, type(found).__name__])

    async with TestClient(Router().state(LocalSettings("sub")).get("/", handler)) as client:
        assert (await client.get("/")).json() == ["sub", True, "LocalSettings"]


class Tenant(FromRequest):
    def __init__(self, label: str) -> None:
        self.label = label

    @classmethod
    def from_request(cls, request: Request) -> Tenant:
        return cls(f"{request.state(Settings).name}:{request.header('x-tenant')}")


async def test_from_request_reads_state_through_the_request() -> None:
    async def handler(tenant: Tenant) -> Response:
        return Response.text(tenant.label)

    inner = Router().get("/", handler)
    router = Router().state(Settings("eu")).nest("/t", inner)
    async with TestClient(router) as client:
        assert (await client.get("/t", headers={"x-tenant": "acme"})).text == "eu:acme"


async def test_unrouted_requests_see_the_state_of_the_routers_covering_the_path() -> None:
    seen: list[str] = []

    async def note(request: Request, next: Next) -> Response:
        try:
            settings = request.state(Settings).name
        except LookupError:
            settings = "-"
        seen.append(f"{request.path} {request.state(Cache).name} {settings}")
        return await next(request)

    async def ok() -> Response:
        return Response.text("ok")

    inner = Router().state(Settings("inner")).get("/x", ok)
    router = Router().state(Cache("root")).middleware(note).get("/", ok).nest("/in", inner)
    async with TestClient(router) as client:
        assert (await client.get("/nowhere")).status_code == 404
        assert (await client.post("/")).status_code == 405
        assert (await client.get("/in/nowhere")).status_code == 404
        assert (await client.post("/in/x")).status_code == 405
        assert (await client.get("/in/x")).status_code == 200
    assert seen == [
        "/nowhere root -",
        "/ root -",
        "/in/nowhere root inner",
        "/in/x root inner",
        "/in/x root inner",
    ]


async def test_no_state_of_that_type_is_a_lookup_error_and_a_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caught: list[LookupError] = []

    async def handler(request: Request) -> Response:
        try:
            request.state(Cache)
        except LookupError as error:
            caught.append(error)
        request.state(Cache)
        return Response.text("unreachable")

    async with TestClient(Router().state(Settings("s")).get("/c", handler)) as client:
        with caplog.at_level(logging.ERROR, logger="trioframe"):
            response = await client.get("/c")
    assert response.status_code == 500
    assert response.json() == {
        "status": 500,
        "error": "Internal Server Error",
        "message": "Internal Server Error",
    }
    assert "no state of type Cache" in str(caught[0])
    assert any(
        r.exc_info is not None and isinstance(r.exc_info[1], LookupError) for r in caplog.records
    )


async def test_a_middleware_lookup_error_is_a_500_too() -> None:
    raised: list[type[BaseException]] = []

    async def strict(request: Request, next: Next) -> Response:
        try:
            request.state(Cache)
        except Exception as error:
            raised.append(type(error))
            raise
        return await next(request)

    async def ok() -> Response:
        return Response.text("ok")

    async with TestClient(Router().middleware(strict).get("/", ok)) as client:
        response = await client.get("/")
        missing = await client.get("/missing")
    assert response.status_code == missing.status_code == 500
    assert response.json()["error"] == "Internal Server Error"
    assert raised == [LookupError, LookupError]
