"""annotated-types constraints (``Annotated[int, Ge(1)]``): checked after conversion wherever
a type is converted, refused at startup where they cannot apply, and described."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import math
from typing import Annotated, Any, TypedDict

import attrs
import pytest
from annotated_types import (
    Ge,
    Gt,
    Interval,
    Le,
    Len,
    Lt,
    MaxLen,
    MinLen,
    MultipleOf,
    Not,
    Predicate,
    Timezone,
)

from trioframe import ConfigurationError, Form, Json, Path, Query, Response, Router, freeze
from trioframe._codec.constraints import Bounds, constrained, constraints_of, has_constraints
from trioframe._codec.convert import JSON_CONVERTER, TEXT_CONVERTER, describe_failure
from trioframe._extract.plan import build_plan
from trioframe.testing import TestClient


def failures(value: Any, kind: Any, converter: Any = JSON_CONVERTER) -> list[str]:
    try:
        converter.structure(value, kind)
    except Exception as exc:
        return describe_failure(exc, "body")
    return []


def is_even(value: int) -> bool:
    return value % 2 == 0


# -- one value -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "good", "bad", "reason"),
    [
        (Annotated[int, Ge(1)], 1, 0, "must be at least 1"),
        (Annotated[int, Gt(0)], 1, 0, "must be greater than 0"),
        (Annotated[int, Le(100)], 100, 101, "must be at most 100"),
        (Annotated[int, Lt(100)], 99, 100, "must be less than 100"),
        (Annotated[float, Interval(ge=0.5, lt=1)], 0.5, 1.0, "must be less than 1"),
        (Annotated[float, Interval(ge=0.5, lt=1)], 0.99, 0.25, "must be at least 0.5"),
        (Annotated[int, MultipleOf(5)], 15, 7, "must be a multiple of 5"),
        (Annotated[float, MultipleOf(0.1)], 0.3, 0.35, "must be a multiple of 0.1"),
        (
            Annotated[decimal.Decimal, MultipleOf(decimal.Decimal("0.01"))],
            "1.25",
            "1.255",
            "must be a multiple of 0.01",
        ),
        (Annotated[str, MinLen(3)], "abc", "ab", "must be at least 3 characters long"),
        (Annotated[str, MaxLen(20)], "a" * 20, "a" * 21, "must be at most 20 characters long"),
        (Annotated[str, MinLen(1)], "a", "", "must be at least 1 character long"),
        (Annotated[list[int], MinLen(3)], [1, 2, 3], [1, 2], "must have at least 3 items"),
        (Annotated[list[int], MaxLen(1)], [1], [1, 2], "must have at most 1 item"),
        (Annotated[dict[str, int], Len(1, 2)], {"a": 1}, {}, "must have at least 1 item"),
        (Annotated[set[int], Len(0, 2)], [1, 2], [1, 2, 3], "must have at most 2 items"),
        (Annotated[int, Predicate(is_even)], 2, 3, "must satisfy is_even"),
        (Annotated[str, Predicate(str.isdigit)], "12", "1a", "must satisfy isdigit"),
        (Annotated[float, Predicate(math.isfinite)], 1.0, math.inf, "must satisfy isfinite"),
        (Annotated[int, Predicate(lambda v: v > 0)], 1, 0, "must satisfy <lambda>"),
        (
            Annotated[datetime.date, Ge(datetime.date(2024, 1, 1))],
            "2024-01-01",
            "2023-12-31",
            "must be at least 2024-01-01",
        ),
        (
            Annotated[datetime.timedelta, Le(datetime.timedelta(hours=1))],
            3600,
            3601,
            "must be at most PT1H",
        ),
    ],
)
def test_a_constraint_refuses_what_is_outside_it(
    kind: Any, good: Any, bad: Any, reason: str
) -> None:
    assert failures(good, kind) == []
    assert failures(bad, kind) == [f"body: {reason}"]


def test_text_values_are_checked_after_parsing() -> None:
    assert TEXT_CONVERTER.structure("100", Annotated[int, Le(100)]) == 100
    assert failures("101", Annotated[int, Le(100)], TEXT_CONVERTER) == ["body: must be at most 100"]
    assert failures("x", Annotated[int, Le(100)], TEXT_CONVERTER) == ["body: expected an integer"]


def test_the_first_failing_constraint_is_the_reason() -> None:
    kind = Annotated[int, Ge(1), MultipleOf(5)]
    assert failures(0, kind) == ["body: must be at least 1"]
    assert failures(7, kind) == ["body: must be a multiple of 5"]


def test_none_is_not_checked() -> None:
    for kind in (Annotated[int | None, Ge(1)], Annotated[int, Ge(1)] | None):
        assert JSON_CONVERTER.structure(None, kind) is None
        assert failures(0, kind) == ["body: must be at least 1"]


def test_a_bound_that_does_not_compare_is_a_failure_not_a_crash() -> None:
    aware = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    kind = Annotated[datetime.datetime, Ge(aware)]
    assert failures("2024-06-01T00:00", kind) == [
        "body: must be at least 2024-01-01T00:00:00+00:00"
    ]


def test_a_predicate_that_raises_refuses_the_value() -> None:
    kind = Annotated[str, Predicate(lambda text: int(text) > 0)]
    assert failures("1", kind) == []
    assert failures("x", kind) == ["body: must satisfy <lambda>"]


def test_a_decimal_too_large_to_divide_is_not_a_multiple() -> None:
    kind = Annotated[decimal.Decimal, MultipleOf(3)]
    assert failures("1e999999", kind) == ["body: must be a multiple of 3"]


# -- fields at any depth, list items ------------------------------------------------------------
@dataclasses.dataclass
class Line:
    qty: Annotated[int, Gt(0)]
    sku: Annotated[str, MinLen(1)] = "x"


@attrs.frozen
class Order:
    lines: Annotated[list[Line], MaxLen(3)]
    codes: list[Annotated[int, Ge(0)]] = attrs.Factory(list)


class Zip(TypedDict):
    zip: Annotated[str, Len(5, 5)]


class Address(Zip, total=False):
    floor: Annotated[int, Interval(ge=0, le=200)]


@attrs.frozen
class Search:
    page_size: Annotated[int, Le(100)] = 20
    tags: Annotated[list[str], MaxLen(2)] = attrs.Factory(list)
    ids: list[Annotated[int, Ge(1)]] = attrs.Factory(list)
    name: Annotated[str, MaxLen(5)] | None = None


@dataclasses.dataclass
class Range:  # string annotations (this module's __future__ import): resolved with extras
    low: Annotated[int, Ge(0)]
    high: Annotated[int, Le(10)]


#: real annotations, not strings: cattrs reads them as they are
Counted = dataclasses.make_dataclass("Counted", [("n", Annotated[int, MultipleOf(2)])])


@attrs.frozen
class Ids:
    user_id: Annotated[int, Ge(1)]
    slug: Annotated[str, MaxLen(8)]


def test_nested_fields_and_items_name_their_place() -> None:
    order = {"lines": [{"qty": 1}, {"qty": 2}, {"qty": 0, "sku": ""}], "codes": [1, -1]}
    assert failures(order, Order) == [
        "body.lines[2].qty: must be greater than 0",
        "body.lines[2].sku: must be at least 1 character long",
        "body.codes[1]: must be at least 0",
    ]
    too_many = {"lines": [{"qty": 1}] * 4}
    assert failures(too_many, Order) == ["body.lines: must have at most 3 items"]
    assert failures({"zip": "123", "floor": 201}, Address) == [
        "body.zip: must be at least 5 characters long",
        "body.floor: must be at most 200",
    ]
    assert failures({"zip": "12345"}, Address) == []
    assert failures({"n": 3}, Counted) == ["body.n: must be a multiple of 2"]
    assert failures({"low": -1, "high": 11}, Range) == [
        "body.low: must be at least 0",
        "body.high: must be at most 10",
    ]


async def test_every_extractor_honours_the_constraints() -> None:
    async def search(q: Query[Search]) -> Response:
        return Response.json(q)

    async def order(o: Json[Order]) -> Response:
        return Response.json(len(o.lines))

    async def form(r: Form[Range]) -> Response:
        return Response.json(r)

    async def ids(p: Path[Ids]) -> Response:
        return Response.json(p)

    async def scalar(user_id: Path[Annotated[int, Ge(1)]]) -> Response:
        return Response.json(user_id)

    async def top(values: Json[Annotated[list[int], MinLen(1)]]) -> Response:
        return Response.json(values)

    router = (
        Router()
        .get("/search", search)
        .post("/orders", order)
        .post("/ranges", form)
        .get("/ids/{user_id}/{slug}", ids)
        .get("/users/{user_id}", scalar)
        .post("/values", top)
    )
    async with TestClient(router) as client:
        ok = await client.get("/search?page_size=100&tags=a&ids=1&ids=2")
        assert ok.json() == {"page_size": 100, "tags": ["a"], "ids": [1, 2], "name": None}
        bad = await client.get("/search?page_size=101&tags=a&tags=b&tags=c&ids=1&ids=0&name=abcdef")
        assert bad.status_code == 400
        assert bad.json()["errors"] == [
            "query.page_size: must be at most 100",
            "query.tags: must have at most 2 items",
            "query.ids[1]: must be at least 1",
            "query.name: must be at most 5 characters long",
        ]
        bad = await client.post("/orders", json={"lines": [{"qty": 1}, {"qty": 1}, {"qty": 0}]})
        assert bad.status_code == 422
        assert bad.json()["errors"] == ["body.lines[2].qty: must be greater than 0"]
        bad = await client.post("/ranges", data={"low": "-1", "high": "3"})
        assert (bad.status_code, bad.json()["errors"]) == (422, ["body.low: must be at least 0"])
        assert (await client.get("/ids/1/abc")).json() == {"user_id": 1, "slug": "abc"}
        bad = await client.get("/ids/0/abcdefghi")
        assert bad.status_code == 400
        assert bad.json()["errors"] == [
            "path.user_id: must be at least 1",
            "path.slug: must be at most 8 characters long",
        ]
        assert (await client.get("/users/7")).json() == 7
        bad = await client.get("/users/0")
        assert (bad.status_code, bad.json()["errors"]) == (
            400,
            ["path.user_id: must be at least 1"],
        )
        bad = await client.post("/values", json=[])
        assert (bad.status_code, bad.json()["errors"]) == (422, ["body: must have at least 1 item"])


# -- the startup check ------------------------------------------------------------------------
@attrs.frozen
class ShortPage:
    page: Annotated[int, MinLen(3)]


@attrs.frozen
class NamedAbove:
    name: Annotated[str, Ge(1)]


@dataclasses.dataclass
class Stepped:
    total: Annotated[decimal.Decimal, MultipleOf(0.5)]


@dataclasses.dataclass
class Listed:
    tags: Annotated[list[str], Gt(1)]


def _plan(annotation: Any, pattern_params: tuple[str, ...] = ("v",)) -> None:
    async def handler(v: Any) -> Response:
        return Response.text("ok")

    handler.__annotations__ = {"v": annotation, "return": Response}
    build_plan(handler, pattern_params)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (
            Query[ShortPage],
            "Query[ShortPage]: MinLen(min_length=3) applies to strings, collections and dicts, "
            "not to int (at ShortPage.page)",
        ),
        (
            Json[NamedAbove],
            "Json[NamedAbove]: Ge(ge=1) applies to numbers, dates, times and durations, "
            "not to str (at NamedAbove.name)",
        ),
        (
            Form[Stepped],
            "Form[Stepped]: MultipleOf(multiple_of=0.5) cannot apply to Decimal: its step is "
            "a float (at Stepped.total)",
        ),
        (
            Query[Listed],
            "Query[Listed]: Gt(gt=1) applies to numbers, dates, times and durations, not to "
            "list[str] (at Listed.tags)",
        ),
        (
            Json[list[Annotated[str, MultipleOf(2)]]],
            "MultipleOf(multiple_of=2) applies to numbers, not to str (at [])",
        ),
        (Json[Annotated[int, Ge("1")]], "Ge(ge='1') cannot bound int: its bound is a str"),
        (
            Json[Annotated[datetime.datetime, Ge(datetime.date(2024, 1, 1))]],
            "cannot bound datetime: its bound is a date",
        ),
        (
            Json[Annotated[bool, Ge(0)]],
            "applies to numbers, dates, times and durations, not to bool",
        ),
        (
            Json[Annotated[int, MultipleOf(0)]],
            "MultipleOf(multiple_of=0): the step must be positive",
        ),
        (
            Json[Annotated[int, MultipleOf(2), MultipleOf(3)]],
            "two different MultipleOf steps (2, 3)",
        ),
        (
            Json[Annotated[datetime.datetime, Timezone(...)]],
            "Timezone(tz=Ellipsis) is not supported",
        ),
        (
            Json[Annotated[float, Predicate(Not(math.isfinite))]],
            "Predicate(Not(func=<built-in function isfinite>)) is not hashable",
        ),
        (Json[Annotated[int | None, MinLen(1)]], "MinLen(min_length=1) applies to strings"),
        (
            Path[Annotated[Ids, Predicate(bool)]],
            "a path value is one piece of text; it cannot hold Ids",
        ),
    ],
)
def test_constraints_that_cannot_apply_are_refused_naming_the_field(
    annotation: Any, message: str
) -> None:
    with pytest.raises(ConfigurationError, match="parameter 'v': ") as raised:
        _plan(annotation)
    assert message in str(raised.value)


def test_constraints_that_apply_are_accepted() -> None:
    for annotation in [
        Query[Search],
        Json[Order],
        Json[Address],
        Form[Range],
        Path[Annotated[int, Ge(1), Le(10)]],
        Json[Annotated[list[int], Len(1, 3)]],
        Json[Annotated[Line, Predicate(lambda line: line.qty < 10)]],
        Json[Annotated[decimal.Decimal, Gt(0.5), MultipleOf(decimal.Decimal("0.5"))]],
        Json[Annotated[datetime.time, Lt(datetime.time(12))]],
        Json[Annotated[int, "a description", Ge(0)]],
    ]:
        _plan(annotation)


# -- described --------------------------------------------------------------------------------
def test_constraints_are_normalized() -> None:
    assert constraints_of(int) is None
    assert constraints_of(Annotated[int, "a description"]) is None
    assert constraints_of(Annotated[int, Ge(1), Ge(5), Interval(gt=0, le=100), Lt(50)]) == Bounds(
        minimum=5, exclusive_minimum=0, maximum=100, exclusive_maximum=50
    )
    assert constraints_of(Annotated[str, Len(2, 9), MaxLen(5), Predicate(str.isdigit)]) == Bounds(
        min_length=2, max_length=5, predicates=(str.isdigit,)
    )
    assert constraints_of(Annotated[int, MultipleOf(5)]) == Bounds(multiple_of=5)


def test_types_without_constraints_are_passed_and_converted_as_before() -> None:
    assert constrained(Path[int]) is int
    assert constrained(Json[Annotated[Order, "a description"]]) is Order
    assert constrained(Path[Annotated[int, Ge(1)]]) == Annotated[int, Ge(1)]
    assert not has_constraints(Annotated[int, "a description"])
    # no hook of the constraints' own: cattrs's, which strips the metadata
    hook = TEXT_CONVERTER.get_structure_hook(Annotated[int, "a description"])
    assert hook.__qualname__.startswith("Converter.gen_structure_annotated")


def test_param_info_carries_the_constraints_of_the_value_itself() -> None:
    async def handler(
        user_id: Path[Annotated[int, Ge(1), Le(99)]],
        values: Json[Annotated[list[int], MaxLen(3)]],
        search: Query[Search],
    ) -> Response:
        return Response.text("ok")

    (route,) = freeze(Router().post("/{user_id}", handler)).routes
    user_id, values, search = route.params
    assert (user_id.type, user_id.constraints) == (int, Bounds(minimum=1, maximum=99))
    assert (values.type, values.constraints) == (list[int], Bounds(max_length=3))
    assert search.constraints is None  # its fields' constraints stay in the type
