"""The middleware chain: order, what it sees, short-circuits, errors, nesting, cancellation."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from trioframe import (
    ConfigurationError,
    Error,
    Extension,
    Json,
    Request,
    Response,
    Router,
    ServerConfig,
)
from trioframe._chain import Next
from trioframe.testing import TestClient


class User(str):
    pass


def tagging(name: str, seen: list[str]):  # type: ignore[no-untyped-def]
    async def middleware(request: Request, next: Next) -> Response:
        seen.append(f"{name}>")
        response = await next(request)
        seen.append(f"<{name}")
        return response.with_header(f"x-{name}", str(response.status))

    return middleware


async def hello() -> Response:
    return Response.text("hi")


async def test_first_attached_runs_outermost() -> None:
    seen: list[str] = []
    router = Router().middleware(tagging("a", seen)).middleware(tagging("b", seen)).get("/", hello)
    async with TestClient(router) as client:
        response = await client.get("/")
    assert seen == ["a>", "b>", "<b", "<a"]
    assert response.headers["x-a"] == response.headers["x-b"] == "200"


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/missing", None, 404),
        ("POST", "/", None, 405),
        ("GET", "/%zz", None, 400),
        ("GET", "/items/", None, 308),
        ("OPTIONS", "/", None, 204),
        ("HEAD", "/", None, 200),
        ("POST", "/items", b"x" * 101, 413),
        ("POST", "/items", b"{}", 415),
        ("POST", "/items", b'{"a": 1}', 422),
        ("GET", "/boom", None, 500),
        ("GET", "/refuse", None, 403),
    ],
)
async def test_middleware_sees_every_response(
    method: str, path: str, body: bytes | None, status: int
) -> None:
    seen: list[str] = []

    async def items(value: Json[dict[str, str]]) -> Response:
        return Response.json(value)

    async def boom() -> Response:
        raise RuntimeError("boom")

    async def refuse() -> Response:
        raise Error.forbidden("no")

    router = (
        Router()
        .middleware(tagging("outer", seen))
        .get("/", hello)
        .post("/items", items)
        .get("/items", hello)
        .get("/boom", boom)
        .get("/refuse", refuse)
    )
    headers = (
        {"content-type": "text/plain"} if body == b"{}" else {"content-type": "application/json"}
    )
    async with TestClient(router, ServerConfig(max_body_size=100)) as client:
        response = await client.request(method, path, content=body, headers=headers)
    assert response.status_code == status
    assert response.headers["x-outer"] == str(status)


async def test_short_circuit_and_errors_from_middleware() -> None:
    async def gate(request: Request, next: Next) -> Response:
        if request.header("authorization") != "Bearer ok":
            raise Error.unauthorized("missing token", headers={"WWW-Authenticate": "Bearer"})
        if request.path == "/teapot":
            return Response.text("short", 418)
        return await next(request)

    handled: list[str] = []

    async def secret() -> Response:
        handled.append("secret")
        return Response.text("secret")

    router = Router().middleware(gate).get("/", secret).get("/teapot", secret)
    async with TestClient(router) as client:
        refused = await client.get("/")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["message"] == "missing token"
        ok = {"authorization": "Bearer ok"}
        assert (await client.get("/teapot", headers=ok)).status_code == 418
        assert handled == []
        assert (await client.get("/", headers=ok)).text == "secret"


async def test_middleware_inserts_an_extension_for_the_handler() -> None:
    async def auth(request: Request, next: Next) -> Response:
        request.extensions.insert(User("ada"))
        return await next(request)

    async def me(user: Extension[User]) -> Response:
        return Response.text(user)

    async with TestClient(Router().middleware(auth).get("/me", me)) as client:
        assert (await client.get("/me")).text == "ada"


async def test_object_middleware_and_exceptions_inside_it() -> None:
    class Counting:
        def __init__(self) -> None:
            self.count = 0

        async def __call__(self, request: Request, next: Next) -> Response:
            self.count += 1
            if request.path == "/crash":
                raise RuntimeError("middleware bug")
            return await next(request)

    counter = Counting()
    async with TestClient(Router().middleware(counter).get("/", hello)) as client:
        assert (await client.get("/")).text == "hi"
        crashed = await client.get("/crash")
        assert crashed.status_code == 500 and "middleware bug" not in crashed.text
    assert counter.count == 2


async def test_nested_router_middleware_wraps_only_its_routes() -> None:
    seen: list[str] = []
    inner = Router().middleware(tagging("inner", seen)).get("/", hello)
    outer = Router().middleware(tagging("outer", seen)).get("/", hello).nest("/api", inner)
    async with TestClient(outer) as client:
        top = await client.get("/")
        assert "x-inner" not in top.headers and top.headers["x-outer"] == "200"
        nested = await client.get("/api")
        assert nested.headers["x-inner"] == nested.headers["x-outer"] == "200"
    assert seen == ["outer>", "<outer", "outer>", "inner>", "<inner", "<outer"]


async def test_a_deadline_around_next_cancels_the_handler(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cancelled = trio.Event()

    async def slow() -> Response:
        try:
            await trio.sleep(10)
        except trio.Cancelled:
            cancelled.set()
            raise
        return Response.text("late")

    async def deadline(request: Request, next: Next) -> Response:
        with trio.move_on_after(1):
            return await next(request)
        return Response.error(503, "took too long")

    async with TestClient(Router().middleware(deadline).get("/", slow)) as client:
        start = trio.current_time()
        response = await client.get("/")
        assert response.status_code == 503 and json.loads(response.text)["status"] == 503
        assert trio.current_time() - start == 1
        assert cancelled.is_set()


async def test_middleware_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="not callable"):
        async with TestClient(Router().middleware(42).get("/", hello)):
            pass


async def test_a_middleware_that_forgets_return_is_a_logged_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def forgetful(request: Request, next: Next) -> Response:
        await next(request)  # no return
        return None  # type: ignore[return-value]

    async with TestClient(Router().middleware(forgetful).get("/", hello)) as client:
        response = await client.get("/")
    assert response.status_code == 500
    assert any("not a Response" in r.getMessage() or r.exc_info for r in caplog.records)


async def test_json_errors_in_a_middleware_are_its_own_bug_not_the_clients() -> None:
    async def decodes(request: Request, next: Next) -> Response:
        json.loads("{broken")
        return await next(request)

    async def parses() -> Response:
        json.loads("{broken")
        return Response.text("unreachable")

    async with TestClient(Router().middleware(decodes).get("/", hello)) as client:
        assert (await client.get("/")).status_code == 500
    async with TestClient(Router().get("/", parses)) as client:
        assert (await client.get("/")).status_code == 400


async def test_unrouted_middleware_is_gathered_once_per_router_scope() -> None:
    # The chain around a 404/405/308/OPTIONS answer is bound to that request's routing
    # outcome (no side channel through request.extensions), so only the middleware list of
    # each router scope is kept, taken once at freeze.
    calls: list[str] = []

    async def note(request: Request, next: Next) -> Response:
        calls.append(request.path)
        return await next(request)

    router = Router().middleware(note).get("/", hello)
    async with TestClient(router) as client:
        app = client._transport._server._prepare().app  # type: ignore[attr-defined]
        for path in ("/a", "/b", "/c"):
            assert (await client.get(path)).status_code == 404
        scopes = {id(app._table.match("GET", path).scope) for path in ("/a", "/b", "/c")}
        assert len(scopes) == 1
    assert calls == ["/a", "/b", "/c"]
