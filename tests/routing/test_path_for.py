"""``App.path_for``: each parameter written as its ``Path[T]`` reads it, percent-encoded per
segment, and every mistake a ``ValueError`` that names it."""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid
from typing import Any

import attrs
import pytest

from trioframe import FromRequest, Path, Request, Response, Router, freeze


class Color(enum.Enum):
    RED = "red"
    ONE = 1


class Switch(enum.Enum):
    ON = True


async def by_int(item_id: Path[int]) -> Response:
    return Response.text("")


async def untyped(request: Request) -> Response:
    return Response.text("")


async def files(rest: Path[str]) -> Response:
    return Response.text("")


@attrs.frozen
class Span:
    day: datetime.date
    color: Color


async def by_record(span: Path[Span]) -> Response:
    return Response.text("")


async def by_tuple(pair: Path[tuple[uuid.UUID, decimal.Decimal]]) -> Response:
    return Response.text("")


async def by_list(values: Path[list[float]]) -> Response:
    return Response.text("")


async def two_scalars(a: Path[Switch], b: Path[datetime.datetime]) -> Response:
    return Response.text("")


class Owner(FromRequest):
    def __init__(self, owner_id: int) -> None:
        self.owner_id = owner_id

    @classmethod
    async def from_request(cls, owner_id: Path[int]) -> Owner:
        return cls(owner_id)


async def by_dependency(owner: Owner) -> Response:
    return Response.text("")


APP = freeze(
    Router()
    .get("/items/{item_id}", by_int)
    .get("/raw/{a}/{b}", untyped)
    .get("/files/{*rest}", files)
    .get("/spans/{day}/{color}", by_record)
    .get("/pairs/{key}/{amount}", by_tuple)
    .get("/floats/{x}/{y}", by_list)
    .get("/scalars/{a}/{b}", two_scalars)
    .get("/owners/{owner_id}", by_dependency)
    .get("/caf\u00e9 & bar/{item_id}/", by_int, name="literal")
)


@pytest.mark.parametrize(
    ("name", "params", "path"),
    [
        ("by_int", {"item_id": 42}, "/items/42"),
        ("by_int", {"item_id": -7}, "/items/-7"),
        ("untyped", {"a": 1.5, "b": "x y"}, "/raw/1.5/x%20y"),
        ("files", {"rest": "a b/c%/d"}, "/files/a%20b/c%25/d"),
        ("files", {"rest": "dir/"}, "/files/dir/"),
        (
            "by_record",
            {"day": datetime.date(2024, 5, 1), "color": Color.RED},
            "/spans/2024-05-01/red",
        ),
        (
            "by_record",
            {"day": datetime.date(2024, 5, 1), "color": Color.ONE},
            "/spans/2024-05-01/1",
        ),
        (
            "by_tuple",
            {"key": uuid.UUID(int=1), "amount": decimal.Decimal("1.50")},
            "/pairs/00000000-0000-0000-0000-000000000001/1.50",
        ),
        ("by_list", {"x": 1e16, "y": -0.5}, "/floats/1e+16/-0.5"),
        (
            "two_scalars",
            {"a": Switch.ON, "b": datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.UTC)},
            "/scalars/true/2024-05-01T12:00:00+00:00",
        ),
        ("by_dependency", {"owner_id": 3}, "/owners/3"),
        ("literal", {"item_id": 1}, "/caf%C3%A9%20&%20bar/1/"),
        ("files", {"rest": "?#[]"}, "/files/%3F%23%5B%5D"),
        ("untyped", {"a": "a/b", "b": "!$&'()*+,;=:@"}, "/raw/a%2Fb/!$&'()*+,;=:@"),
    ],
)
def test_parameters_are_written_as_they_are_read_and_encoded_per_segment(
    name: str, params: dict[str, Any], path: str
) -> None:
    assert APP.path_for(name, **params) == path


def test_a_route_without_parameters() -> None:
    assert freeze(Router().get("/", untyped)).path_for("untyped") == "/"


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "by_ints",
            {},
            "path_for('by_ints'): no route is named 'by_ints' (did you mean 'by_int'?)",
        ),
        ("nothing like it", {}, "path_for('nothing like it'): no route is named 'nothing like it'"),
        (
            "by_int",
            {},
            "path_for('by_int'): missing path parameter 'item_id' (the route is /items/{item_id})",
        ),
        (
            "by_int",
            {"item_id": 1, "page": 2},
            "path_for('by_int'): the route /items/{item_id} has no path parameter 'page'",
        ),
        (
            "by_int",
            {"item_id": "42"},
            "path_for('by_int'): path parameter 'item_id': '42' would be read back as 42",
        ),
        (
            "by_int",
            {"item_id": 1.5},
            "path_for('by_int'): path parameter 'item_id': 1.5 is refused: expected an integer",
        ),
        (
            "by_list",
            {"x": float("nan"), "y": 1.0},
            "path_for('by_list'): path parameter 'x': nan is refused: expected a number",
        ),
        (
            "by_record",
            {"day": datetime.datetime(2024, 5, 1, 12), "color": Color.RED},
            "path_for('by_record'): path parameter 'day': datetime.datetime(2024, 5, 1, 12, 0) "
            "is refused: expected an ISO 8601 date (YYYY-MM-DD)",
        ),
        (
            "by_record",
            {"day": datetime.date(2024, 5, 1), "color": "red"},
            "path_for('by_record'): path parameter 'color': 'red' would be read back as "
            "<Color.RED: 'red'>",
        ),
        (
            "files",
            {"rest": 5},
            "path_for('files'): path parameter 'rest': 5 would be read back as '5'",
        ),
        (
            "untyped",
            {"a": "", "b": "x"},
            "path_for('untyped'): path parameter 'a' is empty: its segment needs some text",
        ),
        (
            "files",
            {"rest": "/etc"},
            "path_for('files'): path parameter 'rest' starts with '/': its segment needs some text",
        ),
        (
            "files",
            {"rest": "a/../b"},
            "path_for('files'): path parameter 'rest' has the segment '..', which clients "
            "resolve away as a relative path",
        ),
        (
            "untyped",
            {"a": ".", "b": "x"},
            "path_for('untyped'): path parameter 'a' has the segment '.', which clients "
            "resolve away as a relative path",
        ),
        (
            "untyped",
            {"a": "a\x00b", "b": "x"},
            "path_for('untyped'): path parameter 'a' holds a NUL, which no path may carry",
        ),
        (
            "untyped",
            {"a": "\ud800", "b": "x"},
            "path_for('untyped'): path parameter 'a': 'utf-8' codec can't encode character "
            "'\\ud800' in position 0: surrogates not allowed",
        ),
    ],
)
def test_every_mistake_is_a_value_error_naming_it(
    name: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        APP.path_for(name, **params)
    assert str(caught.value) == message


def test_an_untyped_parameter_is_written_with_str() -> None:
    class Slug:
        def __str__(self) -> str:
            return "my slug"

    assert APP.path_for("untyped", a=Slug(), b=3) == "/raw/my%20slug/3"


def test_the_first_typed_reader_decides_how_a_parameter_is_written() -> None:
    async def both(first: Path[int], request: Request) -> Response:
        return Response.text("")

    async def as_text(item_id: Path[str]) -> Response:
        return Response.text("")

    app = freeze(Router().get("/x/{first}", both, name="x").post("/x/{first}", as_text, name="x"))
    assert app.path_for("x", first=5) == "/x/5"
    with pytest.raises(ValueError, match="'five' is refused: expected an integer"):
        app.path_for("x", first="five")
