"""``examples/rest_api.py``: CRUD over an in-memory store held in application state."""

from __future__ import annotations

import pathlib
import runpy
from http import HTTPStatus
from typing import Any

import httpx

from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "rest_api.py"


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


async def create(client: httpx.AsyncClient, name: str, price: float, **extra: Any) -> int:
    response = await client.post("/items", json={"name": name, "price": price, **extra})
    assert response.status_code == 201, response.text
    item_id: int = response.json()["id"]
    return item_id


async def test_create_answers_201_with_location_and_the_item_is_kept() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/items", json={"name": "Widget", "price": 9.5})
        assert response.status_code == 201
        assert response.headers["location"] == "/items/1"
        assert response.json() == {"id": 1, "name": "Widget", "price": 9.5, "description": ""}
        fetched = await client.get("/items/1")
        assert fetched.status_code == 200
        assert fetched.json() == response.json()
        second = await client.post("/items", json={"name": "Gadget", "price": 3})
        assert second.json()["id"] == 2


async def test_each_loaded_router_has_its_own_store() -> None:
    async with TestClient(load()) as client:
        await create(client, "Widget", 1)
    async with TestClient(load()) as client:
        assert (await client.get("/items")).json()["total"] == 0


async def test_missing_item_is_404_for_every_method() -> None:
    async with TestClient(load()) as client:
        body = {"name": "Widget", "price": 1}
        for response in (
            await client.get("/items/42"),
            await client.put("/items/42", json=body),
            await client.patch("/items/42", json={"price": 2}),
            await client.delete("/items/42"),
        ):
            assert response.status_code == 404
            assert response.json() == {
                "status": 404,
                "error": "Not Found",
                "message": "item 42 not found",
            }


async def test_delete_answers_204_and_the_item_is_gone() -> None:
    async with TestClient(load()) as client:
        item_id = await create(client, "Widget", 1)
        response = await client.delete(f"/items/{item_id}")
        assert response.status_code == 204
        assert response.content == b""
        assert (await client.get(f"/items/{item_id}")).status_code == 404
        assert (await client.delete(f"/items/{item_id}")).status_code == 404


async def test_put_replaces_the_whole_item() -> None:
    async with TestClient(load()) as client:
        item_id = await create(client, "Widget", 1, description="blue")
        response = await client.put(f"/items/{item_id}", json={"name": "Sprocket", "price": 2})
        assert response.status_code == 200
        replaced = {"id": item_id, "name": "Sprocket", "price": 2.0, "description": ""}
        assert response.json() == replaced
        assert (await client.get(f"/items/{item_id}")).json() == replaced


async def test_patch_changes_only_the_fields_given() -> None:
    async with TestClient(load()) as client:
        item_id = await create(client, "Widget", 1, description="blue")
        response = await client.patch(f"/items/{item_id}", json={"price": 7.25})
        assert response.status_code == 200
        patched = {"id": item_id, "name": "Widget", "price": 7.25, "description": "blue"}
        assert response.json() == patched
        assert (await client.get(f"/items/{item_id}")).json() == patched


async def test_a_non_integer_id_is_a_400_naming_the_parameter() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/items/abc")
        assert response.status_code == 400
        assert response.json()["errors"] == ["path.item_id: expected an integer"]


async def test_listing_pages_default_to_20_items() -> None:
    async with TestClient(load()) as client:
        for n in range(25):
            await create(client, f"item {n}", n)
        first = (await client.get("/items")).json()
        assert (first["page"], first["page_size"], first["total"]) == (1, 20, 25)
        assert [item["id"] for item in first["items"]] == list(range(1, 21))
        second = (await client.get("/items", params={"page": 2})).json()
        assert [item["id"] for item in second["items"]] == list(range(21, 26))
        small = (await client.get("/items", params={"page": 3, "page_size": 10})).json()
        assert [item["id"] for item in small["items"]] == list(range(21, 26))
        beyond = (await client.get("/items", params={"page": 9})).json()
        assert beyond["items"] == []
        assert beyond["total"] == 25


async def test_page_size_over_100_is_clamped_to_100() -> None:
    async with TestClient(load()) as client:
        for n in range(105):
            await create(client, f"item {n}", n)
        page = (await client.get("/items", params={"page_size": 500})).json()
        assert page["page_size"] == 100
        assert len(page["items"]) == 100
        rest = (await client.get("/items", params={"page": 2, "page_size": 500})).json()
        assert [item["id"] for item in rest["items"]] == list(range(101, 106))
        exact = (await client.get("/items", params={"page_size": 100})).json()
        assert len(exact["items"]) == 100


async def test_page_and_page_size_below_1_are_400() -> None:
    async with TestClient(load()) as client:
        zero_page = await client.get("/items", params={"page": 0})
        assert zero_page.status_code == 400
        assert zero_page.json()["message"] == "page must be at least 1"
        zero_size = await client.get("/items", params={"page_size": 0})
        assert zero_size.status_code == 400
        assert zero_size.json()["message"] == "page_size must be at least 1"


async def test_a_non_integer_page_is_a_400_naming_the_field() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/items", params={"page": "two"})
        assert response.status_code == 400
        assert response.json()["errors"] == ["query.page: expected an integer"]


async def test_price_filters_are_inclusive_and_combine() -> None:
    async with TestClient(load()) as client:
        for price in (1, 5, 10, 20):
            await create(client, f"costs {price}", price)

        async def prices(**params: float) -> list[float]:
            response = await client.get("/items", params=params)
            assert response.status_code == 200
            page = response.json()
            assert page["total"] == len(page["items"])
            return [item["price"] for item in page["items"]]

        assert await prices(min_price=5) == [5, 10, 20]
        assert await prices(max_price=10) == [1, 5, 10]
        assert await prices(min_price=5, max_price=10) == [5, 10]
        assert await prices(min_price=10, max_price=10) == [10]


async def test_min_price_over_max_price_is_400() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/items", params={"min_price": 10, "max_price": 5})
        assert response.status_code == 400
        assert response.json()["message"] == "min_price must not be greater than max_price"


async def test_a_blank_name_is_400() -> None:
    async with TestClient(load()) as client:
        for name in ("", "   "):
            response = await client.post("/items", json={"name": name, "price": 1})
            assert response.status_code == 400
            assert response.json()["message"] == "body.name: must not be blank"
        assert (await client.get("/items")).json()["total"] == 0


async def test_a_negative_price_alone_is_400() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/items", json={"name": "Widget", "price": -1})
        assert response.status_code == 400
        assert response.json()["message"] == "body.price: must not be negative"


async def test_several_invalid_fields_are_one_422_listing_each() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/items", json={"name": " ", "price": -1})
        assert response.status_code == 422
        body = response.json()
        assert body["status"] == 422
        assert body["error"] == HTTPStatus(422).phrase
        assert body["errors"] == [
            "body.name: must not be blank",
            "body.price: must not be negative",
        ]
        assert (await client.get("/items")).json()["total"] == 0


async def test_updates_are_validated_like_creates() -> None:
    async with TestClient(load()) as client:
        item_id = await create(client, "Widget", 1)
        blank = await client.patch(f"/items/{item_id}", json={"name": ""})
        assert blank.status_code == 400
        both = await client.put(f"/items/{item_id}", json={"name": "", "price": -5})
        assert both.status_code == 422
        assert len(both.json()["errors"]) == 2
        unchanged = {"id": item_id, "name": "Widget", "price": 1.0, "description": ""}
        assert (await client.get(f"/items/{item_id}")).json() == unchanged


async def test_bodies_that_do_not_fit_are_rejected_by_the_extractor() -> None:
    async with TestClient(load()) as client:
        missing = await client.post("/items", json={"name": "Widget"})
        assert missing.status_code == 422
        assert missing.json()["errors"] == ["body.price: required"]
        as_text = await client.post("/items", json={"name": "Widget", "price": "9"})
        assert as_text.status_code == 422
        assert as_text.json()["errors"] == ["body.price: expected a number"]
        not_json = await client.post(
            "/items",
            content=b"name=Widget",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert not_json.status_code == 415
        broken = await client.post(
            "/items", content=b"{", headers={"content-type": "application/json"}
        )
        assert broken.status_code == 400


async def test_an_id_over_pythons_digit_limit_is_a_400_naming_the_parameter() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/items/" + "9" * 5000)
        assert response.status_code == 400
        [error] = response.json()["errors"]
        assert error.startswith("path.item_id: expected an integer")


async def test_price_filters_are_parsed_as_strictly_as_integers() -> None:
    # float() alone would take "1_000" and other scripts' digits ("\u0661" is 1.0).
    async with TestClient(load()) as client:
        for text in ("1_000", "\u0661", "nan", "inf"):
            response = await client.get("/items", params={"min_price": text})
            assert response.status_code == 400, text
            [error] = response.json()["errors"]
            assert error.startswith("query.min_price: expected a"), error
