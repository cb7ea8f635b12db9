"""A record whose initializer refuses its values (an attrs validator, ``__post_init__``): the
error names the field, or the record, and carries the refusal's message."""

from __future__ import annotations

import dataclasses
from typing import Any

import attrs
import pytest

from trioframe import Json, Query, Response, Router
from trioframe._codec.convert import JSON_CONVERTER, TEXT_CONVERTER, describe_failure
from trioframe.testing import TestClient


def _even(instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if value % 2:
        raise ValueError("must be even")


def _broken(instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
    raise RuntimeError("a bug, not a refusal")


@attrs.frozen
class Paging:
    page: int = attrs.field(default=1, validator=attrs.validators.gt(0))
    size: int = attrs.field(default=2, validator=[attrs.validators.lt(100), _even])
    sort: str = attrs.field(default="id", validator=attrs.validators.in_(["id", "name"]))


@dataclasses.dataclass
class Span:
    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low must not be above high")


@attrs.frozen
class Booking:
    span: Span
    paging: Paging


@attrs.frozen
class Checked:
    n: int

    def __attrs_post_init__(self) -> None:
        if self.n < 0:
            raise TypeError("n is negative")


@attrs.frozen
class Buggy:
    n: int = attrs.field(validator=_broken)


def failures(value: Any, kind: Any, converter: Any = JSON_CONVERTER) -> list[str]:
    with pytest.raises(Exception) as raised:
        converter.structure(value, kind)
    return describe_failure(raised.value, "query")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"page": "0"}, "query.page: 'page' must be > 0: 0"),
        ({"size": "3"}, "query.size: must be even"),
        ({"size": "100"}, "query.size: 'size' must be < 100: 100"),
        ({"sort": "date"}, "query.sort: 'sort' must be in ['id', 'name'] (got 'date')"),
    ],
)
def test_an_attrs_validator_names_its_attribute(value: dict[str, str], message: str) -> None:
    assert failures(value, Paging, TEXT_CONVERTER) == [message]


def test_a_post_init_names_the_record() -> None:
    assert failures({"low": 3, "high": 1}, Span) == ["query: low must not be above high"]
    assert failures({"n": -1}, Checked) == ["query: n is negative"]


def test_nested_records_name_the_path_to_them() -> None:
    booking = {"span": {"low": 3, "high": 1}, "paging": {"page": 0}}
    assert failures(booking, Booking) == [
        "query.span: low must not be above high",
        "query.paging.page: 'page' must be > 0: 0",
    ]


def test_other_exceptions_name_the_field_without_their_message() -> None:
    assert failures({"n": 1}, Buggy) == ["query.n: invalid value"]


async def test_validators_errors_reach_the_error_body() -> None:
    async def search(paging: Query[Paging]) -> Response:
        return Response.json(paging)

    async def book(booking: Json[Booking]) -> Response:
        return Response.json(booking)

    router = Router().get("/search", search).post("/book", book)
    async with TestClient(router) as client:
        bad = await client.get("/search?page=0")
        assert bad.status_code == 400
        assert bad.json()["errors"] == ["query.page: 'page' must be > 0: 0"]
        bad = await client.post(
            "/book", json={"span": {"low": 5, "high": 1}, "paging": {"page": 1}}
        )
        assert bad.status_code == 422
        assert bad.json()["errors"] == ["body.span: low must not be above high"]
