"""Typed extractors through the real connection code (TestClient)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from trioframe import (
    Body,
    ConfigurationError,
    Cookies,
    Error,
    Extension,
    Form,
    FromRequest,
    Headers,
    Json,
    Method,
    Path,
    Query,
    Request,
    Response,
    Router,
    State,
    Uri,
)
from trioframe.testing import TestClient


@attrs.define
class Filters:
    page: int = 1
    q: str | None = None
    tags: list[str] = attrs.Factory(list)
    active: bool = False
    ratio: float = 1.0


@dataclasses.dataclass
class Item:
    name: str
    price: float
    tags: list[str] = dataclasses.field(default_factory=list)


@attrs.frozen
class PostPath:
    user_id: int
    post_id: int


def errors_of(response: Any) -> list[str]:
    body = response.json()
    assert set(body) >= {"status", "error", "message"}
    errors: list[str] = body["errors"]
    return errors


# -- Path ------------------------------------------------------------------------------------
async def test_path_shapes() -> None:
    async def scalar(user_id: Path[int]) -> Response:
        return Response.json(user_id)

    async def pair(ids: Path[tuple[int, str]]) -> Response:
        return Response.json(list(ids))

    async def fields(p: Path[PostPath]) -> Response:
        return Response.json(p)

    async def values(parts: Path[list[str]]) -> Response:
        return Response.json(parts)

    async def named(post_id: Path[int]) -> Response:  # several params: picked by name
        return Response.json(post_id)

    router = (
        Router()
        .get("/u/{user_id}", scalar)
        .get("/pair/{a}/{b}", pair)
        .get("/users/{user_id}/posts/{post_id}", fields)
        .get("/v/{x}/{y}", values)
        .get("/n/{user_id}/{post_id}", named)
    )
    async with TestClient(router) as client:
        assert (await client.get("/u/42")).json() == 42
        assert (await client.get("/pair/1/x")).json() == [1, "x"]
        assert (await client.get("/users/1/posts/2")).json() == {"user_id": 1, "post_id": 2}
        assert (await client.get("/v/a%2Fb/c")).json() == ["a/b", "c"]
        assert (await client.get("/n/1/9")).json() == 9
        bad = await client.get("/u/abc")
        assert bad.status_code == 400
        assert errors_of(bad) == ["path.user_id: expected an integer"]
        assert (await client.get("/pair/x/y")).status_code == 400
        assert (await client.get("/users/1/posts/zz")).status_code == 400


@pytest.mark.parametrize(
    ("pattern", "annotation"),
    [
        ("/u/{a}/{b}", "Path[int]"),
        ("/u/{a}", "Path[tuple[int, int]]"),
        ("/u/{user_id}", "Path[PostPath]"),
    ],
)
async def test_path_shapes_that_cannot_fit_the_route_fail_at_startup(
    pattern: str, annotation: str
) -> None:
    namespace: dict[str, Any] = {"Path": Path, "PostPath": PostPath, "Response": Response}
    exec(
        f"async def handler(value: {annotation}) -> Response:\n    return Response.text('x')",
        namespace,
    )
    with pytest.raises(ConfigurationError, match=r"handler .*handler.*'value'"):
        async with TestClient(Router().get(pattern, namespace["handler"])):
            pass


async def test_invalid_percent_encoding_in_a_path_param_is_400() -> None:
    async def h(name: Path[str]) -> Response:
        return Response.text(name)

    async with TestClient(Router().get("/n/{name}", h)) as client:
        assert (await client.get("/n/caf%C3%A9")).text == "café"
        assert (await client.get("/n/%ff")).status_code == 400
        assert (await client.get("/n/%zz")).status_code == 400


# -- Query -----------------------------------------------------------------------------------
async def search(f: Query[Filters]) -> Response:
    return Response.json(f)


async def test_query_fields_defaults_optional_lists_and_booleans() -> None:
    async with TestClient(Router().get("/s", search)) as client:
        assert (await client.get("/s")).json() == {
            "page": 1,
            "q": None,
            "tags": [],
            "active": False,
            "ratio": 1.0,
        }
        got = (await client.get("/s?page=3&q=a+b&tags=x&tags=y&active=on&ratio=0.5")).json()
        assert got == {"page": 3, "q": "a b", "tags": ["x", "y"], "active": True, "ratio": 0.5}
        for spelling, value in [("true", True), ("1", True), ("yes", True), ("off", False)]:
            assert (await client.get(f"/s?active={spelling}")).json()["active"] is value


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("page=x", "query.page: expected an integer"),
        ("page=1_000", "query.page: expected an integer"),
        ("page=" + "9" * 5000, "query.page: expected an integer (too many digits)"),
        ("active=maybe", "query.active: expected a boolean (true/false, 1/0, yes/no, on/off)"),
        ("ratio=nan", "query.ratio: expected a number"),
        ("ratio=1_0", "query.ratio: expected a number"),
        ("ratio=1e999", "query.ratio: expected a finite number"),
    ],
)
async def test_query_failures_are_400_with_located_errors(query: str, message: str) -> None:
    async with TestClient(Router().get("/s", search)) as client:
        response = await client.get(f"/s?{query}")
        assert response.status_code == 400
        assert errors_of(response) == [message]


async def test_several_failing_fields_are_all_listed() -> None:
    async with TestClient(Router().get("/s", search)) as client:
        response = await client.get("/s?page=x&active=maybe")
        assert sorted(errors_of(response)) == [
            "query.active: expected a boolean (true/false, 1/0, yes/no, on/off)",
            "query.page: expected an integer",
        ]


async def test_query_dict_and_hostile_query_strings() -> None:
    async def as_dict(q: Query[dict[str, str]]) -> Response:
        return Response.json(q)

    async with TestClient(Router().get("/d", as_dict)) as client:
        assert (await client.get("/d?a=1&b=2&a=3")).json() == {"a": "3", "b": "2"}
        assert (await client.get("/d?a=%zz")).status_code == 400
        assert (await client.get("/d?a=%ff")).status_code == 400
        many = "&".join(f"k{i}=v" for i in range(1000))
        assert (await client.get(f"/d?{many}")).status_code == 200
        assert (await client.get(f"/d?{many}&one=more")).status_code == 400


# -- Json --------------------------------------------------------------------------------------
async def create(item: Json[Item]) -> Response:
    return Response.json(item).with_status(201)


JSON = {"content-type": "application/json"}


async def test_json_into_a_dataclass_and_its_failure_statuses() -> None:
    async with TestClient(Router().post("/items", create)) as client:
        ok = await client.post("/items", json={"name": "a", "price": 2})
        assert ok.status_code == 201 and ok.json() == {"name": "a", "price": 2.0, "tags": []}
        vendor = await client.post(
            "/items",
            content=b'{"name":"a","price":1}',
            headers={"content-type": "application/vnd.api+json; charset=utf-8"},
        )
        assert vendor.status_code == 201
        assert (await client.post("/items", content=b"{}")).status_code == 415
        wrong = await client.post("/items", content=b"{}", headers={"content-type": "text/plain"})
        assert wrong.status_code == 415
        assert (await client.post("/items", content=b"{nope", headers=JSON)).status_code == 400
        assert (await client.post("/items", content=b"\xff\xfe", headers=JSON)).status_code == 400
        missing = await client.post("/items", json={"name": "a"})
        assert missing.status_code == 422 and errors_of(missing) == ["body.price: required"]
        typed = await client.post("/items", json={"name": 5, "price": "1"})
        assert typed.status_code == 422
        assert sorted(errors_of(typed)) == [
            "body.name: expected a string",
            "body.price: expected a number",
        ]


@pytest.mark.parametrize(
    "body",
    [
        b'{"name":"a","price":NaN}',
        b'{"name":"a","price":Infinity}',
        b'{"name":"a","price":-Infinity}',
        b'{"name":"a","price":' + b"1" * 5000 + b"}",
        b"[" * 101 + b"]" * 101,
        b'{"a":' * 101 + b"1" + b"}" * 101,
    ],
)
async def test_hostile_json_is_400_never_500(body: bytes) -> None:
    async with TestClient(Router().post("/items", create)) as client:
        response = await client.post("/items", content=body, headers=JSON)
        assert response.status_code == 400
        assert response.json()["status"] == 400


async def test_json_nesting_at_the_limit_is_accepted() -> None:
    async def anything(value: Json[Any]) -> Response:
        return Response.json({"ok": True})

    async with TestClient(Router().post("/a", anything)) as client:
        at_limit = b"[" * 100 + b"]" * 100
        assert (await client.post("/a", content=at_limit, headers=JSON)).status_code == 200
        brackets_in_strings = json.dumps({"s": "[" * 500}).encode()
        assert (
            await client.post("/a", content=brackets_in_strings, headers=JSON)
        ).status_code == 200


def _nested(levels: int) -> bytes:
    """Arrays and objects in turn, ``levels`` deep, with brackets in strings along the way."""
    body = b'"]]}}"'
    for level in range(levels):
        body = b'["[[", ' + body + b"]" if level % 2 else b'{"{[": ' + body + b', "k": "}"}'
    return body


@pytest.mark.parametrize(("levels", "status"), [(99, 200), (100, 200), (101, 400)])
async def test_json_nesting_limit_is_exact(levels: int, status: int) -> None:
    async def anything(value: Json[Any]) -> Response:
        return Response.json({"ok": True})

    async with TestClient(Router().post("/a", anything)) as client:
        response = await client.post("/a", content=_nested(levels), headers=JSON)
    assert response.status_code == status
    if status == 400:
        assert response.json()["message"] == "JSON nested deeper than 100 levels"


async def test_json_deeper_than_the_parser_goes_is_the_same_400() -> None:
    async def anything(value: Json[Any]) -> Response:
        return Response.json({"ok": True})

    async with TestClient(Router().post("/a", anything)) as client:
        response = await client.post("/a", content=b"[" * 100_000 + b"]" * 100_000, headers=JSON)
    assert response.status_code == 400
    assert response.json()["message"] == "JSON nested deeper than 100 levels"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
async def test_json_depth_of_utf16_and_utf32_is_counted_on_characters(encoding: str) -> None:
    async def anything(value: Json[Any]) -> Response:
        return Response.json(value)

    # U+225B and U+5B22 put the bytes of "[" and a quote inside one character
    shallow = json.dumps(["\u225b\u5b22" * 200], ensure_ascii=False).encode(encoding)
    deep = json.dumps(json.loads(_nested(101))).encode(encoding)
    async with TestClient(Router().post("/a", anything)) as client:
        ok = await client.post("/a", content=shallow, headers=JSON)
        assert ok.status_code == 200 and ok.json() == ["\u225b\u5b22" * 200]
        assert (await client.post("/a", content=deep, headers=JSON)).status_code == 400


async def test_json_other_shapes() -> None:
    async def maybe(value: Json[Item | None]) -> Response:
        return Response.json({"none": value is None})

    async def listing(values: Json[list[int]]) -> Response:
        return Response.json(sum(values))

    async def mapping(values: Json[dict[str, Any]]) -> Response:
        return Response.json(sorted(values))

    router = Router().post("/maybe", maybe).post("/list", listing).post("/dict", mapping)
    async with TestClient(router) as client:
        assert (await client.post("/maybe", content=b"null", headers=JSON)).json() == {"none": True}
        assert (await client.post("/list", json=[1, 2, 3])).json() == 6
        assert (await client.post("/list", json=[1, "x"])).status_code == 422
        assert (await client.post("/dict", json={"b": 1, "a": 2})).json() == ["a", "b"]


# -- Form, Body, Headers, Method, Uri ----------------------------------------------------------
async def test_form_like_query_with_body_statuses() -> None:
    async def form(item: Form[Item]) -> Response:
        return Response.json(item)

    async with TestClient(Router().post("/f", form)) as client:
        ok = await client.post("/f", data={"name": "n", "price": "2.5", "tags": ["a", "b"]})
        assert ok.json() == {"name": "n", "price": 2.5, "tags": ["a", "b"]}
        assert (await client.post("/f", json={"name": "n"})).status_code == 415
        assert (await client.post("/f", data={"name": "n"})).status_code == 422
        form_type = {"content-type": "application/x-www-form-urlencoded"}
        assert (await client.post("/f", content=b"name=%zz", headers=form_type)).status_code == 400
        assert (await client.post("/f", content=b"name=\xff", headers=form_type)).status_code == 400
        many = "&".join(f"k{i}=v" for i in range(1001)).encode()
        assert (await client.post("/f", content=many, headers=form_type)).status_code == 400


async def test_form_decoded_as_it_arrives_still_leaves_the_body_to_read() -> None:
    async def form_then_body(item: Form[Item], body: Body) -> Response:
        return Response.json({"name": item.name, "size": len(body)})

    async def body_then_form(body: Body, item: Form[Item]) -> Response:
        return Response.json({"name": item.name, "size": len(body)})

    async def pieces(data: bytes) -> AsyncIterator[bytes]:
        for start in range(0, len(data), 1000):  # cuts escapes and characters in two
            yield data[start : start + 1000]

    name = "caf%C3%A9+" * 5000
    data = f"price=1&name={name}".encode()
    form_type = {"content-type": "application/x-www-form-urlencoded"}
    router = Router().post("/fb", form_then_body).post("/bf", body_then_form)
    async with TestClient(router) as client:
        for path in ("/fb", "/bf"):
            response = await client.post(path, content=pieces(data), headers=form_type)
            assert response.json() == {"name": "café " * 5000, "size": len(data)}


async def test_class_based_extractors() -> None:
    async def everything(body: Body, headers: Headers, method: Method, uri: Uri) -> Response:
        return Response.json(
            {
                "size": len(body),
                "is_bytes": isinstance(body, bytes),
                "x": headers.get("X-Thing"),
                "method": str(method),
                "path": uri.path,
                "query": uri.query,
            }
        )

    async with TestClient(Router().post("/e/{x}", everything)) as client:
        got = (await client.post("/e/a%20b?z=1", content=b"12345", headers={"x-thing": "t"})).json()
        assert got == {
            "size": 5,
            "is_bytes": True,
            "x": "t",
            "method": "POST",
            "path": "/e/a b",
            "query": "z=1",
        }


# -- rules: order, `| Error`, lazy body, custom extractors ----------------------------------------
async def test_any_number_of_extractors_in_any_order() -> None:
    async def mixed(
        f: Query[Filters], item: Json[Item], user_id: Path[int], req: Request
    ) -> Response:
        return Response.json([user_id, f.page, item.name, req.method])

    async with TestClient(Router().post("/u/{user_id}", mixed)) as client:
        got = await client.post("/u/7?page=2", json={"name": "n", "price": 1})
        assert got.json() == [7, 2, "n", "POST"]


async def test_or_error_hands_the_failure_to_the_handler() -> None:
    async def tolerant(f: Query[Filters] | Error, item: Json[Item] | Error) -> Response:
        return Response.json(
            {
                "query": f.status if isinstance(f, Error) else f.page,
                "json": item.status if isinstance(item, Error) else item.name,
            }
        )

    async with TestClient(Router().post("/t", tolerant)) as client:
        got = await client.post(
            "/t?page=x", content=b"oops", headers={"content-type": "text/plain"}
        )
        assert got.status_code == 200 and got.json() == {"query": 400, "json": 415}


async def test_body_is_read_only_when_the_handler_needs_it() -> None:
    seen: list[str] = []

    async def no_body(f: Query[Filters]) -> Response:
        seen.append("ran")
        return Response.text("ok")

    async with TestClient(Router().post("/n", no_body)) as client:
        # A body that is not valid anything: it is never parsed, so no 400/415.
        response = await client.post("/n", content=b"\xff" * 10)
        assert response.status_code == 200 and seen == ["ran"]


class ApiVersion(FromRequest):
    def __init__(self, value: str) -> None:
        self.value = value

    @classmethod
    async def from_request(cls, request: Request) -> ApiVersion:
        value = request.header("api-version") or "1.0"
        if value not in ("1.0", "2.0"):
            raise Error.bad_request(f"unsupported API version {value}")
        return cls(value)


class Caller(FromRequest):
    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def from_request(cls, request: Request) -> Caller:  # a plain classmethod works too
        return cls(request.header("x-caller") or "anonymous")


async def test_custom_extractors_sync_and_async() -> None:
    async def versioned(version: ApiVersion, caller: Caller) -> Response:
        return Response.json([version.value, caller.name])

    async with TestClient(Router().get("/v", versioned)) as client:
        assert (await client.get("/v", headers={"api-version": "2.0"})).json() == [
            "2.0",
            "anonymous",
        ]
        assert (await client.get("/v", headers={"x-caller": "ada"})).json() == ["1.0", "ada"]
        refused = await client.get("/v", headers={"api-version": "9"})
        assert refused.status_code == 400
        assert refused.json()["message"] == "unsupported API version 9"


# -- State and Extension -------------------------------------------------------------------------
class Store:
    name = "base"


class SpecialStore(Store):
    name = "special"


async def test_state_by_type_subclasses_and_nesting() -> None:
    async def read(store: State[Store]) -> Response:
        return Response.text(store.name)

    inner = Router().state(Store()).get("/", read)
    outer = Router().state(SpecialStore()).get("/", read).nest("/inner", inner)
    async with TestClient(outer) as client:
        assert (await client.get("/")).text == "special"  # a subclass satisfies State[Store]
        assert (await client.get("/inner")).text == "special"  # the parent wins


async def test_missing_state_fails_at_startup_naming_handler_and_parameter() -> None:
    async def read(store: State[Store]) -> Response:
        return Response.text(store.name)

    with pytest.raises(ConfigurationError, match=r"read.*'store'.*no state of type Store"):
        async with TestClient(Router().get("/", read)):
            pass


class Tag(str):
    pass


async def test_a_missing_extension_is_500() -> None:
    async def tagged(tag: Extension[Tag]) -> Response:
        return Response.text(tag)

    async with TestClient(Router().get("/", tagged)) as client:
        response = await client.get("/")
        assert response.status_code == 500
        assert response.json()["message"] == "Internal Server Error"


async def test_unknown_annotation_fails_at_startup() -> None:
    async def odd(value: complex) -> Response:
        return Response.text("x")

    with pytest.raises(ConfigurationError, match=r"odd.*'value'"):
        async with TestClient(Router().get("/", odd)):
            pass


async def test_cookies_extractor_is_the_request_cookie_jar() -> None:
    async def jar(cookies: Cookies) -> Response:
        return Response.json(
            {"session": cookies.get("session"), "has": "theme" in cookies, "n": len(cookies)}
        )

    async with TestClient(Router().get("/", jar)) as client:
        response = await client.get("/", headers={"cookie": "session=abc; theme=dark"})
        assert response.json() == {"session": "abc", "has": True, "n": 2}
