"""``examples/versioning.py``: the ``ApiVersion`` custom extractor and versioned payloads."""

from __future__ import annotations

import pathlib
import runpy

import httpx
import pytest

from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "versioning.py"

V1_ITEMS = {
    "version": "1.0",
    "items": [
        {"id": 1, "name": "Widget", "price": 9.99},
        {"id": 2, "name": "Gadget", "price": 24.5},
    ],
}
V2_ITEMS = {
    "version": "2.0",
    "data": [
        {"id": 1, "name": "Widget", "price": {"amount_cents": 999, "currency": "EUR"}},
        {"id": 2, "name": "Gadget", "price": {"amount_cents": 2450, "currency": "EUR"}},
    ],
    "meta": {"count": 2},
}


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


def version_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    assert response.headers["api-version"] == response.json()["version"]
    version: str = response.json()["version"]
    return version


async def test_without_any_hint_the_version_is_1_0() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/items")
        assert version_of(response) == "1.0"
        assert response.json() == V1_ITEMS


async def test_the_path_prefix_picks_the_version() -> None:
    async with TestClient(load()) as client:
        v1 = await client.get("/v1/items")
        assert version_of(v1) == "1.0"
        assert v1.json() == V1_ITEMS
        v2 = await client.get("/v2/items")
        assert version_of(v2) == "2.0"
        assert v2.json() == V2_ITEMS


async def test_the_query_parameter_beats_the_path_prefix() -> None:
    async with TestClient(load()) as client:
        assert version_of(await client.get("/items", params={"version": "2.0"})) == "2.0"
        assert version_of(await client.get("/v2/items", params={"version": "1.0"})) == "1.0"
        assert version_of(await client.get("/v1/items", params={"version": "2"})) == "2.0"


async def test_the_header_beats_the_query_parameter_and_the_path_prefix() -> None:
    async with TestClient(load()) as client:
        assert version_of(await client.get("/items", headers={"api-version": "2.0"})) == "2.0"
        both = await client.get(
            "/v1/items", params={"version": "1.0"}, headers={"API-Version": "2.0"}
        )
        assert version_of(both) == "2.0"
        assert both.json() == V2_ITEMS
        down = await client.get("/v2/items", headers={"api-version": "1"})
        assert version_of(down) == "1.0"


@pytest.mark.parametrize(
    ("asked", "resolved"),
    [("1", "1.0"), ("1.0", "1.0"), ("v1", "1.0"), ("2", "2.0"), ("2.0", "2.0"), ("V2", "2.0")],
)
async def test_version_spellings(asked: str, resolved: str) -> None:
    async with TestClient(load()) as client:
        assert version_of(await client.get("/items", headers={"api-version": asked})) == resolved
        assert version_of(await client.get("/items", params={"version": asked})) == resolved


@pytest.mark.parametrize("asked", ["3.0", "0", "1.1", "latest", ""])
async def test_unsupported_versions_are_400_before_the_handler(asked: str) -> None:
    async with TestClient(load()) as client:
        for response in (
            await client.get("/items", params={"version": asked}),
            await client.get("/v2/items", headers={"api-version": asked}),
        ):
            assert response.status_code == 400
            assert response.json() == {
                "status": 400,
                "error": "Bad Request",
                "message": (
                    f"unsupported API version {asked!r}; supported versions are 1.0 and 2.0"
                ),
            }
            assert "api-version" not in response.headers


async def test_a_version_prefix_that_has_no_routes_is_404() -> None:
    async with TestClient(load()) as client:
        assert (await client.get("/v3/items")).status_code == 404


async def test_one_item_in_each_version() -> None:
    async with TestClient(load()) as client:
        v1 = await client.get("/v1/items/2")
        assert version_of(v1) == "1.0"
        assert v1.json() == {
            "version": "1.0",
            "item": {"id": 2, "name": "Gadget", "price": 24.5},
        }
        v2 = await client.get("/items/2", headers={"api-version": "2"})
        assert version_of(v2) == "2.0"
        assert v2.json() == {
            "version": "2.0",
            "data": {
                "id": 2,
                "name": "Gadget",
                "price": {"amount_cents": 2450, "currency": "EUR"},
            },
        }
        assert (await client.get("/v2/items/7")).status_code == 404
        bad_id = await client.get("/v2/items/seven")
        assert bad_id.status_code == 400
        assert bad_id.json()["errors"] == ["path.item_id: expected an integer"]
