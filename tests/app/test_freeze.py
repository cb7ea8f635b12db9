"""``freeze(router)``: the frozen application describes its routes, and nothing done to the
router afterwards changes what it answers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from trioframe import (
    App,
    Body,
    ConfigurationError,
    Cookies,
    Extension,
    Form,
    FromRequest,
    Headers,
    Json,
    Method,
    Next,
    ParamInfo,
    Path,
    Query,
    Request,
    Response,
    Router,
    Shutdown,
    State,
    Uri,
    WebSocketConnection,
    freeze,
)
from trioframe._extract.params import MISSING
from trioframe._multipart.form import Multipart
from trioframe.testing import TestClient


@attrs.frozen
class Item:
    name: str
    price: float = 0.0


@attrs.frozen
class Paging:
    page: int = 1


class Settings:
    pass


class CurrentUser(FromRequest):
    """A dependency that reads a header and a query record of its own."""

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    async def from_request(
        cls, request: Request, headers: Headers, paging: Query[Paging]
    ) -> CurrentUser:
        return cls(headers.get("x-user") or "anonymous")


async def get_item(item_id: Path[int], paging: Query[Paging], user: CurrentUser) -> Item:
    return Item(str(item_id))


async def create_item(item: Json[Item], settings: State[Settings]) -> Item:
    return item


class Tag:
    pass


NO_TAG = Tag()


async def upload(form: Form[Item], tag: Extension[Tag] = NO_TAG) -> Response:
    return Response.text("ok")


async def raw(
    body: Body, method: Method, request: Request, uri: Uri, cookies: Cookies, shutdown: Shutdown
) -> str:
    return "ok"


async def files(parts: Multipart) -> None:
    return None


async def echo(ws: WebSocketConnection) -> None:
    await ws.close()


def described_router() -> Router:
    items = Router().get("/{item_id}", get_item).post("/", create_item).state(Settings())
    return (
        Router()
        .nest("/items", items)
        .post("/upload", upload)
        .put("/raw", raw)
        .post("/files", files)
        .websocket("/ws", echo)
    )


def test_routes_describe_paths_methods_handlers_and_returns() -> None:
    app = freeze(described_router())
    assert isinstance(app, App)
    rows = [(r.path, r.methods, r.name, r.returns, r.websocket) for r in app.routes]
    assert rows == [  # a router's own routes in registration order, then its nested ones'
        ("/upload", ("POST",), "upload", Response, False),
        ("/raw", ("PUT",), "raw", str, False),
        ("/files", ("POST",), "files", type(None), False),
        ("/ws", ("GET",), "echo", type(None), True),
        ("/items/{item_id}", ("GET",), "get_item", Item, False),
        ("/items", ("POST",), "create_item", Item, False),
    ]
    assert app.routes[4].handler is get_item


def test_params_say_source_name_type_and_default() -> None:
    routes = {route.name: route for route in freeze(described_router()).routes}
    assert routes["get_item"].params == (
        ParamInfo("path", "item_id", int),
        ParamInfo("query", "paging", Paging),
        ParamInfo("dependency", "user", CurrentUser),
        ParamInfo("request", "headers", Headers, dependency="CurrentUser.from_request"),
        ParamInfo("query", "paging", Paging, dependency="CurrentUser.from_request"),
    )
    assert routes["create_item"].params == (
        ParamInfo("body", "item", Item, media_type="application/json"),
        ParamInfo("state", "settings", Settings),
    )
    form, tag = routes["upload"].params
    assert form == ParamInfo("body", "form", Item, media_type="application/x-www-form-urlencoded")
    assert (tag.source, tag.name, tag.type, tag.required) == ("extension", "tag", Tag, False)
    assert tag.default is NO_TAG
    assert [(p.source, p.type, p.media_type) for p in routes["raw"].params] == [
        ("body", Body, "application/octet-stream"),
        ("request", Method, None),
        ("request", Request, None),
        ("request", Uri, None),
        ("request", Cookies, None),
        ("request", Shutdown, None),
    ]
    assert [(p.source, p.media_type) for p in routes["files"].params] == [
        ("body", "multipart/form-data")
    ]
    assert routes["echo"].params == (ParamInfo("websocket", "ws", WebSocketConnection),)
    assert routes["get_item"].params[0].default is MISSING


def test_a_route_without_a_return_annotation_returns_none() -> None:
    async def plain():  # type: ignore[no-untyped-def]
        return "x"

    (route,) = freeze(Router().get("/", plain)).routes
    assert route.returns is None


def test_the_app_cannot_be_changed() -> None:
    app = freeze(Router().get("/", hello))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        app.routes = ()  # type: ignore[misc]


async def hello() -> str:
    return "hello"


async def test_changing_the_router_after_freeze_changes_nothing() -> None:
    seen: list[str] = []

    async def late(request: Request, next_: Next) -> Response:
        seen.append(request.path)
        return await next_(request)

    router = Router().get("/", hello)
    app = freeze(router)
    router.get("/late", hello).middleware(late).state(Settings())
    assert [route.path for route in app.routes] == ["/"]
    assert freeze(router).routes[-1].path == "/late"  # a new freeze sees the change


async def test_middleware_added_while_serving_reaches_neither_routes_nor_404s() -> None:
    """The answers no route gives used to read the router's middleware at request time: a
    middleware added once serving had begun applied to 404s and not to routes."""
    seen: list[str] = []

    async def late(request: Request, next_: Next) -> Response:
        seen.append(request.path)
        return await next_(request)

    router = Router().get("/", hello)
    async with TestClient(router) as client:
        assert (await client.get("/")).status_code == 200
        router.middleware(late)
        assert (await client.get("/")).status_code == 200
        assert (await client.get("/missing")).status_code == 404
        assert (await client.post("/")).status_code == 405
    assert seen == []


def test_freeze_runs_the_startup_checks() -> None:
    async def bad(value: Query[object]) -> None: ...

    with pytest.raises(ConfigurationError, match="bad"):
        freeze(Router().get("/", bad))


async def lifespan() -> AsyncIterator[Settings]:
    yield Settings()


def test_lifespans_are_listed_in_the_order_they_are_entered() -> None:
    from contextlib import asynccontextmanager

    first, second = asynccontextmanager(lifespan), asynccontextmanager(lifespan)
    inner = Router().lifespan(second)
    app = freeze(Router().lifespan(first).nest("/in", inner))
    assert [span.function for span in app.lifespans] == [first, second]
