"""A parameter without an extractor: the startup error suggests what was probably meant."""

from __future__ import annotations

import dataclasses
from typing import Any, Self

import pytest

from trioframe import ConfigurationError, Form, FromRequest, Query, Request, Response, Router
from trioframe._extract.plan import build_plan
from trioframe._extract.records import RECORD_KINDS
from trioframe.testing import TestClient


@dataclasses.dataclass
class Item:
    name: str


def _message(handler: Any, route_params: tuple[str, ...] = ()) -> str:
    with pytest.raises(ConfigurationError) as info:
        build_plan(handler, route_params)
    prefix = f"handler {handler.__module__}.{handler.__qualname__}, "
    message = str(info.value)
    assert message.startswith(prefix)
    return message.removeprefix(prefix)


def test_a_plain_scalar_named_like_a_route_parameter_suggests_path() -> None:
    async def get_item(item_id: int) -> Response:
        return Response.text("")

    assert _message(get_item, ("item_id",)) == (
        "parameter 'item_id': no extractor for annotation int; did you mean "
        "item_id: Path[int] (the route parameter {item_id})?"
    )


def test_a_plain_scalar_suggests_query_otherwise() -> None:
    async def tagged(tags: list[int]) -> Response:
        return Response.text("")

    async def search_q(q: str) -> Response:
        return Response.text("")

    assert _message(search_q) == (
        "parameter 'q': no extractor for annotation str; did you mean q: Query[str] "
        "(the query parameter ?q=)?"
    )
    assert _message(tagged, ("tags",)) == (  # a route parameter is one value, not a list
        "parameter 'tags': no extractor for annotation list[int]; did you mean "
        "tags: Query[list[int]] (the query parameter ?tags=)?"
    )


def test_the_query_suggestion_names_the_route_parameters() -> None:
    # item_id on /items/{id}: a query parameter, or a misspelt route parameter
    async def get_item(item_id: int) -> Response:
        return Response.text("")

    assert _message(get_item, ("shop", "id")) == (
        "parameter 'item_id': no extractor for annotation int; did you mean "
        "item_id: Query[int] (the query parameter ?item_id=; Path[...] reads the route's "
        "parameters by name: {shop}, {id})?"
    )


def test_an_optional_scalar_keeps_its_none() -> None:
    async def search(q: str | None = None) -> Response:
        return Response.text("")

    assert _message(search) == (
        "parameter 'q': no extractor for annotation str | None; did you mean "
        "q: Query[str | None] (the query parameter ?q=)?"
    )


def test_a_record_suggests_json() -> None:
    async def create(item: Item) -> Response:
        return Response.text("")

    assert _message(create) == (
        "parameter 'item': no extractor for annotation Item; did you mean item: Json[Item] "
        "(a JSON body), Form[Item] (a form body) or Query[Item] (the query string)?"
    )


def test_an_unannotated_parameter_takes_its_type_from_the_default() -> None:
    async def by_route(item_id):  # type: ignore[no-untyped-def]
        return Response.text("")

    async def paged(page=1):  # type: ignore[no-untyped-def]
        return Response.text("")

    async def odd(page=Item("x")):  # type: ignore[no-untyped-def]  # noqa: B008
        return Response.text("")

    assert _message(by_route, ("item_id",)) == (
        "parameter 'item_id': the parameter has no annotation; did you mean "
        "item_id: Path[str] (the route parameter {item_id})?"
    )
    assert _message(paged) == (
        "parameter 'page': the parameter has no annotation; did you mean page: Query[int] "
        "(the query parameter ?page=)?"
    )
    assert _message(odd).endswith("did you mean page: Query[str] (the query parameter ?page=)?")


def test_a_type_no_extractor_fits_gets_no_suggestion() -> None:
    async def mapping(values: dict[str, int]) -> Response:
        return Response.text("")

    assert _message(mapping) == "parameter 'values': no extractor for annotation dict[str, int]"


class Listing(FromRequest):
    @classmethod
    def from_request(cls, request: Request, page: int = 1) -> Self:
        return cls()


async def test_a_dependency_parameter_gets_the_suggestion_too() -> None:
    async def items(listing: Listing) -> Response:
        return Response.text("")

    with pytest.raises(ConfigurationError) as info:
        async with TestClient(Router().get("/items/{page}", items)):
            pass
    assert str(info.value).endswith(
        ", dependency Listing.from_request, parameter 'page': no extractor for annotation int; "
        "did you mean page: Path[int] (the route parameter {page})?"
    )


class Plain:
    pass


@pytest.mark.parametrize("extractor", ["Query", "Form"])
def test_a_query_or_form_of_no_record_lists_every_record_kind(extractor: str) -> None:
    async def handler(value: Any) -> Response:
        return Response.text("")

    marker = {"Query": Query, "Form": Form}[extractor]
    handler.__annotations__["value"] = marker[Plain]
    message = _message(handler)
    # the words come from the table the extractors use: every kind it accepts is named
    for words, _, _ in RECORD_KINDS:
        assert words in message
    assert message.endswith(
        "an attrs class, a dataclass, a TypedDict, a pydantic model or dict[str, X]"
        + ("; Plain is none of these" if extractor == "Form" else ")")
    )
