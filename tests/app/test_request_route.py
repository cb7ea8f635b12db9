"""``request.route``: the pattern of the route that matched, what logs and metrics name a
request by."""

from __future__ import annotations

from trioframe import Next, Request, Response, Router
from trioframe.testing import TestClient


async def test_the_route_is_the_pattern_with_its_prefixes_or_none() -> None:
    seen: list[str | None] = []

    async def note(request: Request, next_: Next) -> Response:
        seen.append(request.route)
        return await next_(request)

    async def item(request: Request) -> str:
        return "x"

    async def fallback(request: Request) -> Response:
        return Response.text("fallback", 404)

    api = Router().get("/items/{item_id}", item).fallback(fallback)
    router = Router().middleware(note).nest("/api", api).get("/", item)
    async with TestClient(router) as client:
        await client.get("/api/items/7")
        await client.get("/")
        await client.get("/api/nothing")  # the nested router's fallback
        await client.get("/nothing")  # the built-in 404
        await client.post("/")  # 405
    assert seen == ["/api/items/{item_id}", "/", None, None, None]
