"""The OpenAPI document of a frozen app: what it says about operations, parameters, bodies
and responses, served by ``Router.openapi`` and valid for every example application."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from typing import Annotated, Any

import attrs
import pytest
from annotated_types import Ge, Le
from openapi_spec_validator import validate

from trioframe import (
    APIKey,
    BasicCredentials,
    BearerToken,
    Body,
    ConfigurationError,
    CookieValue,
    Form,
    FromRequest,
    HeaderValue,
    Json,
    Path,
    Query,
    Request,
    Response,
    Router,
    WebSocketConnection,
    openapi_document,
)
from trioframe._multipart.form import Multipart
from trioframe.testing import TestClient

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"


@attrs.frozen
class Item:
    name: str
    price: float


@attrs.frozen
class Paging:
    page: int = 1
    size: Annotated[int, Le(100)] = 20


class Caller(FromRequest):
    def __init__(self, token: str) -> None:
        self.token = token

    @classmethod
    async def from_request(cls, request: Request, x_token: HeaderValue[str]) -> Caller:
        return cls(x_token)


async def get_item(item_id: Path[int], caller: Caller) -> Item:
    """Read one item.

    The item as stored."""
    return Item("pen", 1.0)


async def list_items(
    paging: Query[Paging], q: Query[Annotated[str, Ge("a")]] = "", session: CookieValue[str] = ""
) -> list[Item]:
    return []


async def create(item: Json[Item]) -> Item:
    return item


async def delete(item_id: Path[int]) -> None:
    return None


async def form(item: Form[Item]) -> Response:
    return Response.text("ok")


async def raw(data: Body) -> bytes:
    return data.data


async def upload(parts: Multipart) -> str:
    return "ok"


async def echo(ws: WebSocketConnection) -> None:
    await ws.close()


async def hidden() -> str:
    return "x"


def router() -> Router:
    return (
        Router()
        .get("/items/{item_id}", get_item, tags=["items"])
        .get("/items", list_items, summary="List items", deprecated=True)
        .post("/items", create, status=201, responses={409: "the item exists", 400: Item})
        .delete("/items/{item_id}", delete, status=204)
        .post("/form", form)
        .put("/raw", raw)
        .post("/upload", upload)
        .websocket("/ws", echo)
        .get("/hidden", hidden, include_in_schema=False)
        .openapi(title="Items", version="1.2.3", description="All of them")
    )


def document() -> dict[str, Any]:
    return openapi_document(router(), title="Items", version="1.2.3")


def test_the_document_is_valid_openapi_3_1() -> None:
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.1.0"
    assert set(doc["paths"]) == {"/items/{item_id}", "/items", "/form", "/raw", "/upload"}


def test_operations_take_names_texts_tags_and_deprecation_from_the_route() -> None:
    paths = document()["paths"]
    read = paths["/items/{item_id}"]["get"]
    assert (read["operationId"], read["summary"], read["description"]) == (
        "get_item",
        "Read one item.",
        "The item as stored.",
    )
    assert read["tags"] == ["items"]
    listing = paths["/items"]["get"]
    assert (listing["summary"], listing["deprecated"]) == ("List items", True)


def test_parameters_come_from_every_extractor_and_dependency() -> None:
    paths = document()["paths"]
    read = {(p["in"], p["name"]): p for p in paths["/items/{item_id}"]["get"]["parameters"]}
    assert read["path", "item_id"] == {
        "name": "item_id",
        "in": "path",
        "schema": {"type": "integer"},
        "required": True,
    }
    assert read["header", "x-token"]["required"] is True  # through the dependency
    listing = {(p["in"], p["name"]): p for p in paths["/items"]["get"]["parameters"]}
    assert set(listing) == {
        ("query", "page"),
        ("query", "size"),
        ("query", "q"),
        ("cookie", "session"),
    }
    assert listing["query", "size"]["schema"]["maximum"] == 100
    assert "required" not in listing["query", "page"]


def test_request_bodies_have_their_media_types() -> None:
    paths = document()["paths"]
    assert set(paths["/items"]["post"]["requestBody"]["content"]) == {"application/json"}
    assert set(paths["/form"]["post"]["requestBody"]["content"]) == {
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    }
    assert set(paths["/raw"]["put"]["requestBody"]["content"]) == {"application/octet-stream"}
    assert set(paths["/upload"]["post"]["requestBody"]["content"]) == {"multipart/form-data"}


def test_responses_hold_the_typed_return_the_declared_ones_and_the_framework_s() -> None:
    paths = document()["paths"]
    created = paths["/items"]["post"]["responses"]
    assert set(created) == {"201", "400", "409", "413", "415", "422", "500"}
    assert created["201"]["content"]["application/json"]["schema"]["$ref"].startswith(
        "#/components/schemas/Item"
    )
    assert created["409"] == {"description": "the item exists"}
    assert created["400"]["content"]["application/json"]["schema"]["$ref"].startswith(
        "#/components/schemas/Item"
    )  # responses= wins over the framework's own 400
    assert created["415"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    deleted = paths["/items/{item_id}"]["delete"]["responses"]["204"]
    assert "content" not in deleted
    raw = paths["/raw"]["put"]["responses"]
    assert raw["200"]["content"] == {
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
    }
    assert set(raw) == {"200", "413", "500"}


def test_a_name_several_operations_share_gets_the_method_and_then_the_path() -> None:
    async def resource() -> str:
        return "x"

    shared = Router().get("/a", resource).post("/a", resource).get("/b", resource)
    paths = openapi_document(shared, title="t", version="1")["paths"]
    assert paths["/a"]["get"]["operationId"] == "resource_get_a"
    assert paths["/a"]["post"]["operationId"] == "resource_post"
    assert paths["/b"]["get"]["operationId"] == "resource_get_b"


async def test_router_openapi_serves_the_document_built_at_freeze() -> None:
    async with TestClient(router()) as client:
        response = await client.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    served = response.json()
    assert served["info"] == {"title": "Items", "version": "1.2.3", "description": "All of them"}
    assert "/openapi.json" not in served["paths"]
    validate(served)


def test_openapi_is_called_once_per_application() -> None:
    with pytest.raises(ConfigurationError, match="openapi\\(\\) was called twice"):
        Router().openapi(title="a", version="1").openapi("/other.json", title="b", version="1")


@pytest.mark.parametrize(
    "name", sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem not in {"site", "chat"})
)
def test_every_example_application_has_a_valid_document(name: str) -> None:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        validate(openapi_document(module.router, title=name, version="1"))
    finally:
        del sys.modules[spec.name]


class User(FromRequest):
    def __init__(self, key: str) -> None:
        self.key = key

    @classmethod
    async def from_request(
        cls, request: Request, key: Annotated[str, APIKey(header="x-api-key")]
    ) -> User:
        return cls(key)


async def me(token: BearerToken) -> str:
    return token


async def profile(user: User) -> str:
    return user.key


async def maybe(creds: BasicCredentials | None = None) -> str:
    return "hi"


async def public() -> str:
    return "hi"


def test_operations_list_the_schemes_of_their_credentials_and_only_those() -> None:
    secured = Router().get("/me", me).get("/profile", profile).get("/maybe", maybe).get("/", public)
    doc = openapi_document(secured, title="t", version="1")
    validate(doc)
    paths = doc["paths"]
    assert paths["/me"]["get"]["security"] == [{"bearerAuth": []}]
    assert paths["/profile"]["get"]["security"] == [{"apiKey_header_x-api-key": []}]
    assert paths["/maybe"]["get"]["security"] == [{"basicAuth": []}, {}]
    assert "security" not in paths["/"]["get"]
    assert "401" in paths["/me"]["get"]["responses"] and "401" not in paths["/"]["get"]["responses"]
    assert doc["components"]["securitySchemes"] == {
        "apiKey_header_x-api-key": {"type": "apiKey", "in": "header", "name": "x-api-key"},
        "basicAuth": {"type": "http", "scheme": "basic"},
        "bearerAuth": {"type": "http", "scheme": "bearer"},
    }


async def test_router_openapi_serves_the_documentation_pages_too() -> None:
    async def hello() -> str:
        return "hi"

    both = Router().get("/", hello).openapi(title="t", version="1")
    only_docs = Router().get("/", hello).openapi(title="t", version="1", redoc_path=None)
    async with TestClient(both) as client:
        docs, redoc = await client.get("/docs"), await client.get("/redoc")
        assert (docs.status_code, redoc.status_code) == (200, 200)
        assert 'data-openapi-url="/openapi.json"' in docs.text
    async with TestClient(only_docs) as client:
        assert (await client.get("/docs")).status_code == 200
        assert (await client.get("/redoc")).status_code == 404
