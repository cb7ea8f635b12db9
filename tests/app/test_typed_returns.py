"""Typed returns: a handler returns a value, declared by its return annotation, and it is
written as JSON; the annotation is checked when the app is frozen."""

from __future__ import annotations

import dataclasses
from typing import Any

import attrs
import pydantic
import pytest

from trioframe import ConfigurationError, Response, Router, freeze
from trioframe._response import to_response
from trioframe.testing import TestClient


@attrs.frozen
class Item:
    name: str
    price: float


@dataclasses.dataclass
class Tag:
    label: str


class Model(pydantic.BaseModel):
    id: int
    tags: list[str]


class Opaque:
    pass


async def item() -> Item:
    return Item("pen", 1.5)


async def model() -> Model:
    return Model(id=7, tags=["a"])


async def models() -> list[Model]:
    return [Model(id=1, tags=[]), Model(id=2, tags=["b"])]


async def mixed() -> dict[str, list[Tag]]:
    return {"tags": [Tag("x")]}


async def maybe() -> Item | None:
    return None


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (item, {"name": "pen", "price": 1.5}),
        (model, {"id": 7, "tags": ["a"]}),
        (models, [{"id": 1, "tags": []}, {"id": 2, "tags": ["b"]}]),
        (mixed, {"tags": [{"label": "x"}]}),
    ],
    ids=["attrs", "pydantic", "list of pydantic", "mapping of dataclasses"],
)
async def test_a_returned_value_is_written_as_json(handler: Any, expected: Any) -> None:
    async with TestClient(Router().get("/", handler)) as client:
        response = await client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == expected


async def test_none_from_an_optional_return_is_an_empty_200() -> None:
    async with TestClient(Router().get("/", maybe)) as client:
        response = await client.get("/")
    assert (response.status_code, response.content) == (200, b"")


def test_a_return_type_without_a_converter_is_refused_at_freeze() -> None:
    async def broken() -> Opaque:
        return Opaque()

    async def in_a_list() -> list[Opaque]:
        return []

    for handler in (broken, in_a_list):
        with pytest.raises(ConfigurationError) as caught:
            freeze(Router().get("/", handler))
        assert str(caught.value) == (
            f"handler {__name__}.{handler.__qualname__}: its return annotation -> "
            f"{'Opaque' if handler is broken else f'list[{__name__}.Opaque]'} cannot be written "
            "as JSON "
            f"(no converter for Opaque{'' if handler is broken else ' (at [])'}); return a "
            "record, a pydantic model or a list or mapping of them, or annotate it -> Response"
        )


def test_responses_text_bytes_and_untyped_returns_are_not_checked() -> None:
    async def as_response() -> Response:
        return Response.text("x")

    async def as_text() -> str:
        return "x"

    async def as_bytes() -> bytes:
        return b"x"

    async def anything() -> object:
        return Response.text("x")

    async def either() -> Response | Item:
        return Item("a", 1)

    async def any_json() -> dict[str, object]:
        return {"a": [1]}

    async def any_items() -> list[object] | None:
        return None

    async def untyped():  # type: ignore[no-untyped-def]
        return "x"

    handlers = [as_response, as_text, as_bytes, anything, either, any_json, any_items, untyped]
    router = Router()
    for index, handler in enumerate(handlers):
        router.get(f"/{index}", handler)
    returns = [route.returns for route in freeze(router).routes]
    assert returns == [
        Response,
        str,
        bytes,
        object,
        Response | Item,
        dict[str, object],
        list[object] | None,
        None,
    ]


@pytest.mark.parametrize(
    ("value", "content"),
    [("made", b"made"), (b"\x00", b"\x00"), (None, b""), ({"id": 1}, b'{"id":1}')],
    ids=["text", "bytes", "none", "json"],
)
def test_the_route_status_applies_to_every_returned_value(value: Any, content: bytes) -> None:
    response = to_response(value, 201)
    assert (response.status, response.body) == (201, content)


def test_a_returned_response_keeps_its_own_status() -> None:
    assert to_response(Response.text("x", 202), 201).status == 202


async def test_the_route_status_is_the_answer_s_status() -> None:
    async def create() -> Item:
        return Item("pen", 1.5)

    async def delete() -> None:
        return None

    async def explicit() -> Response:
        return Response.text("kept", 202)

    router = (
        Router()
        .post("/items", create, status=201)
        .delete("/items", delete, status=204)
        .put("/items", explicit, status=201)
    )
    async with TestClient(router) as client:
        created = await client.post("/items")
        deleted = await client.delete("/items")
        kept = await client.put("/items")
    assert (created.status_code, created.json()) == (201, {"name": "pen", "price": 1.5})
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert "content-length" not in deleted.headers and "content-type" not in deleted.headers
    assert (kept.status_code, kept.text) == (202, "kept")
