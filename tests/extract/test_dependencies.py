"""``FromRequest`` dependencies: ``from_request`` parameters after the request are filled by
the handler's plan. Sharing (one ``from_request`` call per class per request), ordering,
errors inside a dependency, and the startup errors (cycles, unknown annotations, body
readers that cannot share the body) through the real connection code (TestClient)."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import attrs
import pytest

from trioframe import (
    ConfigurationError,
    Error,
    Form,
    FromRequest,
    Headers,
    Json,
    Multipart,
    Query,
    Request,
    Response,
    Router,
    State,
    WebSocketConnection,
)
from trioframe.testing import TestClient


@attrs.define
class Page:
    number: int = 1
    size: int = 10


class Db:
    def __init__(self, name: str) -> None:
        self.name = name


# -- sharing: one from_request call per class per request ------------------------------------
class CurrentUser(FromRequest):
    calls: ClassVar[list[str]] = []

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    async def from_request(cls, request: Request, headers: Headers) -> CurrentUser:
        cls.calls.append(request.path)
        return cls(headers.get("x-user") or "anonymous")


class Permissions(FromRequest):
    def __init__(self, user: CurrentUser) -> None:
        self.user = user

    @classmethod
    async def from_request(cls, request: Request, user: CurrentUser) -> Permissions:
        return cls(user)


class AuditTrail(FromRequest):
    def __init__(self, user: CurrentUser) -> None:
        self.user = user

    @classmethod
    def from_request(cls, request: Request, user: CurrentUser) -> AuditTrail:
        return cls(user)


async def test_a_handler_and_two_dependencies_share_one_value() -> None:
    CurrentUser.calls.clear()

    async def handler(user: CurrentUser, perms: Permissions, audit: AuditTrail) -> Response:
        return Response.json(
            {"same": user is perms.user is audit.user, "name": user.name, "id": id(user)}
        )

    async with TestClient(Router().get("/me", handler)) as client:
        first = (await client.get("/me", headers={"x-user": "ada"})).json()
        second = (await client.get("/me")).json()
    assert first["same"] is True and first["name"] == "ada"
    assert second["same"] is True and second["name"] == "anonymous"
    assert first["id"] != second["id"]  # shared within a request, not across requests
    assert CurrentUser.calls == ["/me", "/me"]  # once per request


# -- ordering: dependencies before their dependent, in declaration order -------------------------
ORDER: list[str] = []


class Leaf(FromRequest):
    @classmethod
    def from_request(cls, request: Request) -> Leaf:
        ORDER.append("Leaf")
        return cls()


class Left(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, leaf: Leaf) -> Left:
        ORDER.append("Left")
        return cls()


class Right(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, leaf: Leaf, left: Left) -> Right:
        ORDER.append("Right")
        return cls()


class Top(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, right: Right, left: Left) -> Top:
        ORDER.append("Top")
        return cls()


async def test_dependencies_resolve_before_their_dependent_in_declaration_order() -> None:
    async def handler(top: Top, leaf: Leaf) -> Response:
        ORDER.append("handler")
        return Response.text("ok")

    ORDER.clear()
    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).status_code == 200
    # Top needs Right (needs Leaf, Left), then Left (already there); the handler's own Leaf
    # is the value resolved for Right.
    assert ORDER == ["Leaf", "Left", "Right", "Top", "handler"]


# -- the extractors a dependency may take --------------------------------------------------------
class Context(FromRequest):
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def from_request(  # a sync classmethod with dependencies of every kind
        cls,
        request: Request,
        db: State[Db],
        headers: Headers,
        page: Query[Page],
        user: CurrentUser,
    ) -> Context:
        return cls(
            {
                "db": db.name,
                "agent": headers.get("user-agent"),
                "page": [page.number, page.size],
                "user": user.name,
            }
        )


async def test_state_headers_query_and_another_from_request_inside_a_dependency() -> None:
    async def handler(context: Context) -> Response:
        return Response.json(context.data)

    router = Router().state(Db("main")).get("/", handler)
    async with TestClient(router) as client:
        response = await client.get(
            "/?number=3", headers={"user-agent": "probe", "x-user": "grace"}
        )
    assert response.json() == {"db": "main", "agent": "probe", "page": [3, 10], "user": "grace"}


class Payload(FromRequest):
    def __init__(self, items: list[int]) -> None:
        self.items = items

    @classmethod
    async def from_request(cls, request: Request, items: Json[list[int]]) -> Payload:
        return cls(items)


async def test_a_dependency_and_the_handler_read_the_same_body() -> None:
    async def handler(payload: Payload, raw: Json[list[int]], request: Request) -> Response:
        return Response.json([payload.items, raw, len(request.body)])

    async with TestClient(Router().post("/", handler)) as client:
        response = await client.post(
            "/", content=b"[1, 2]", headers={"content-type": "application/json"}
        )
    assert response.json() == [[1, 2], [1, 2], 6]


# -- errors inside a dependency ----------------------------------------------------------------
class Token(FromRequest):
    calls: ClassVar[int] = 0

    @classmethod
    async def from_request(cls, request: Request) -> Token:
        cls.calls += 1
        if request.header("authorization") is None:
            raise Error.unauthorized("a token is required")
        return cls()


class Account(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, token: Token) -> Account:
        return cls()


async def test_an_error_raised_in_a_dependency_answers_with_it() -> None:
    async def handler(account: Account) -> Response:
        return Response.text("in")

    async with TestClient(Router().get("/", handler)) as client:
        refused = await client.get("/")
        allowed = await client.get("/", headers={"authorization": "x"})
    assert refused.status_code == 401
    assert refused.json() == {
        "status": 401,
        "error": "Unauthorized",
        "message": "a token is required",
    }
    assert allowed.text == "in"


async def test_or_error_on_the_handler_receives_an_error_from_deep_in_the_tree() -> None:
    async def handler(account: Account | Error) -> Response:
        if isinstance(account, Error):
            return Response.text(f"guest ({account.status})")
        return Response.text("member")

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).text == "guest (401)"
        assert (await client.get("/", headers={"authorization": "x"})).text == "member"


async def test_a_failed_dependency_runs_once_and_fails_every_dependent() -> None:
    async def handler(token: Token | Error, account: Account) -> Response:
        return Response.text("unreachable without a token")

    Token.calls = 0
    async with TestClient(Router().get("/", handler)) as client:
        response = await client.get("/")
    assert response.status_code == 401  # the handler's Token | Error did not hide it
    assert Token.calls == 1  # Account got the Error that Token already raised


class Broken(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, token: Token) -> Broken:
        raise RuntimeError("the database went away")


async def test_an_unexpected_exception_in_a_dependency_is_a_500_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handler(broken: Broken | Error) -> Response:  # `| Error` catches Errors only
        return Response.text("unreachable")

    async with TestClient(Router().get("/b", handler)) as client:
        with caplog.at_level(logging.ERROR, logger="trioframe"):
            response = await client.get("/b", headers={"authorization": "x"})
    assert response.status_code == 500
    assert response.json() == {
        "status": 500,
        "error": "Internal Server Error",
        "message": "Internal Server Error",
    }
    assert "the database went away" not in response.text
    records = [r for r in caplog.records if r.name == "trioframe" and "/b" in r.getMessage()]
    assert records and isinstance(records[0].exc_info and records[0].exc_info[1], RuntimeError)


class Paged(FromRequest):
    def __init__(self, page: Page) -> None:
        self.page = page

    @classmethod
    async def from_request(cls, request: Request, page: Query[Page]) -> Paged:
        return cls(page)


async def test_an_extractor_failure_in_a_dependency_answers_as_on_the_handler() -> None:
    async def through_dependency(paged: Paged) -> Response:
        return Response.json(paged.page)

    async def directly(page: Query[Page]) -> Response:
        return Response.json(page)

    router = Router().get("/dep", through_dependency).get("/direct", directly)
    async with TestClient(router) as client:
        via = await client.get("/dep?number=x&size=y")
        direct = await client.get("/direct?number=x&size=y")
        good = await client.get("/dep?number=2")
    assert via.status_code == direct.status_code == 400
    assert via.json() == direct.json()
    assert via.json()["errors"] == [
        "query.number: expected an integer",
        "query.size: expected an integer",
    ]
    assert good.json() == {"number": 2, "size": 10}


# -- mistakes caught at startup ------------------------------------------------------------------
class CycleA(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, b: CycleB) -> CycleA:
        return cls()


class CycleB(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, a: CycleA) -> CycleB:
        return cls()


class SelfNeeding(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, again: SelfNeeding) -> SelfNeeding:
        return cls()


class Unannotated(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, thing) -> Unannotated:  # type: ignore[no-untyped-def]
        return cls()


class UnknownAnnotation(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, ratio: complex) -> UnknownAnnotation:
        return cls()


class NeedsMissingState(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, db: State[Db]) -> NeedsMissingState:
        return cls()


class NoRequest(FromRequest):
    @classmethod
    def from_request(cls) -> NoRequest:  # type: ignore[override]
        return cls()


class NoFromRequest(FromRequest):
    pass


class Indirect(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, inner: Unannotated) -> Indirect:
        return cls()


async def _startup_error(handler: Any) -> str:
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(Router().get("/", handler)):
            pytest.fail("the client must not start")
    return str(info.value)


async def test_a_cycle_fails_at_startup_naming_it() -> None:
    async def cyclic(a: CycleA) -> Response:
        return Response.text("x")

    async def itself(s: SelfNeeding) -> Response:
        return Response.text("x")

    message = await _startup_error(cyclic)
    assert "cyclic" in message and "dependency cycle CycleA -> CycleB -> CycleA" in message
    assert "dependency cycle SelfNeeding -> SelfNeeding" in await _startup_error(itself)


@pytest.mark.parametrize(
    ("dependency", "parameter", "reason"),
    [
        (Unannotated, "thing", "no annotation"),
        (UnknownAnnotation, "ratio", "no extractor"),
        (NeedsMissingState, "db", "no state of type Db"),
    ],
)
async def test_a_dependency_parameter_without_extractor_fails_at_startup(
    dependency: type, parameter: str, reason: str
) -> None:
    async def uses(value: Any) -> Response:
        return Response.text("x")

    uses.__annotations__["value"] = dependency
    message = await _startup_error(uses)
    assert "uses" in message
    assert f"dependency {dependency.__qualname__}.from_request" in message
    assert f"parameter {parameter!r}" in message and reason in message


async def test_a_broken_dependency_two_levels_down_names_it() -> None:
    async def outer(indirect: Indirect) -> Response:
        return Response.text("x")

    message = await _startup_error(outer)
    assert "outer" in message and "Unannotated.from_request" in message and "'thing'" in message


async def test_from_request_must_exist_and_take_the_request() -> None:
    async def missing(value: NoFromRequest) -> Response:
        return Response.text("x")

    async def no_request(value: NoRequest) -> Response:
        return Response.text("x")

    assert "does not define from_request" in await _startup_error(missing)
    assert "request as its first parameter" in await _startup_error(no_request)


# -- body readers across the dependency tree ---------------------------------------------------------
class StreamsForm(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, form: Multipart) -> StreamsForm:
        return cls()


class BuffersBody(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, whole: Request) -> BuffersBody:
        return cls()


@attrs.frozen
class Login:
    user: str


class ReadsForm(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, login: Form[Login]) -> ReadsForm:
        return cls()


class ReadsJson(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, data: Json[Any]) -> ReadsJson:
        return cls()


async def test_multipart_and_a_buffering_reader_conflict_across_the_tree() -> None:
    async def stream_and_buffer(streams: StreamsForm, whole: Request) -> Response:
        return Response.text("x")

    async def buffer_and_stream(buffers: BuffersBody, form: Multipart) -> Response:
        return Response.text("x")

    async def form_and_stream(reads: ReadsForm, streams: StreamsForm) -> Response:
        return Response.text("x")

    first = await _startup_error(stream_and_buffer)
    assert (
        "'whole' (Request)" in first and "'form' of StreamsForm.from_request (Multipart)" in first
    )
    second = await _startup_error(buffer_and_stream)
    assert (
        "'whole' of BuffersBody.from_request (Request)" in second and "'form' (Multipart)" in second
    )
    third = await _startup_error(form_and_stream)
    assert "'login' of ReadsForm.from_request (Form)" in third


async def test_json_in_a_dependency_beside_multipart_is_allowed() -> None:
    # Json reads only a JSON body, Multipart only a multipart one: `| Error` picks either.
    async def either(data: ReadsJson | Error, form: Multipart | Error) -> Response:
        return Response.json([isinstance(data, Error), isinstance(form, Error)])

    async with TestClient(Router().post("/", either)) as client:
        assert (await client.post("/", json={"a": 1})).json() == [False, True]


async def test_websocket_routes_refuse_body_readers_in_dependencies() -> None:
    async def chat(ws: WebSocketConnection, reads: ReadsJson) -> None:
        await ws.close()

    with pytest.raises(ConfigurationError) as info:
        async with TestClient(Router().websocket("/ws", chat)):
            pytest.fail("the client must not start")
    message = str(info.value)
    assert "chat" in message and "ReadsJson.from_request" in message
    assert "no body to extract" in message


class WantsSocket(FromRequest):
    @classmethod
    async def from_request(cls, request: Request, ws: WebSocketConnection) -> WantsSocket:
        return cls()


async def test_a_dependency_cannot_take_the_websocket_connection() -> None:
    async def chat(ws: WebSocketConnection, wants: WantsSocket) -> None:
        await ws.close()

    with pytest.raises(ConfigurationError, match=r"WantsSocket\.from_request.*'ws'"):
        async with TestClient(Router().websocket("/ws", chat)):
            pytest.fail("the client must not start")
