"""Single values and constraints together: ``page: Query[Annotated[int, Ge(1)]] = 1`` reads one
key and checks its bound, and the bound is in ``ParamInfo``."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge, Le, MaxLen

from trioframe import HeaderValue, Query, Router, freeze
from trioframe.testing import TestClient


async def listing(
    page: Query[Annotated[int, Ge(1)]] = 1,
    size: Annotated[Query[int], Le(100)] = 20,
    x_token: HeaderValue[Annotated[str, MaxLen(8)]] = "none",
) -> dict[str, object]:
    return {"page": page, "size": size, "token": x_token}


ROUTER = Router().get("/items", listing)


async def test_a_single_value_keeps_its_bounds() -> None:
    async with TestClient(ROUTER) as client:
        fine = await client.get("/items?page=2&size=100", headers={"x-token": "abc"})
        low = await client.get("/items?page=0")
        high = await client.get("/items?size=101")
        long = await client.get("/items", headers={"x-token": "123456789"})
    assert fine.json() == {"page": 2, "size": 100, "token": "abc"}
    assert low.status_code == 400 and "query.page: must be at least 1" in low.text
    assert high.status_code == 400 and "query.size: must be at most 100" in high.text
    assert long.status_code == 400
    assert "header.x-token: must be at most 8 characters long" in long.text


def test_the_bounds_of_a_single_value_are_described() -> None:
    (route,) = freeze(ROUTER).routes
    page, size, token = route.params
    assert (page.name, page.constraints and page.constraints.minimum) == ("page", 1)
    assert size.constraints is not None and size.constraints.maximum == 100
    assert (token.name, token.constraints and token.constraints.max_length) == ("x-token", 8)
