"""``examples/todo_api.py``: a lifespan-opened store, UUID/date/enum values through JSON,
paths and queries, and the CurrentUser and Page dependencies."""

from __future__ import annotations

import importlib.util
import itertools
import pathlib
import sys
import uuid
from typing import Any

import httpx
import trio
import trio.testing

from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "todo_api.py"
ADA = {"authorization": "Bearer ada"}
BOB = {"authorization": "Bearer bob"}


_loads = itertools.count()


def load() -> dict[str, Any]:
    """A fresh copy of the example, imported as a module (its annotations name its own
    classes, which the framework resolves through ``sys.modules``)."""
    name = f"todo_api_example_{next(_loads)}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return vars(module)


async def create(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/todos", json=body, headers=ADA)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/todos/{created['id']}"
    return created


async def test_create_read_back_and_the_types_round_trip() -> None:
    router: Router = load()["router"]
    async with TestClient(router) as client:
        todo = await create(client, title="Write docs", due="2026-12-01", priority="high")
        assert uuid.UUID(todo["id"]).version == 4
        assert todo["due"] == "2026-12-01" and todo["priority"] == "high"
        assert todo["owner"] == "ada" and todo["done_at"] is None
        fetched = await client.get(f"/todos/{todo['id']}", headers=ADA)
        assert fetched.json() == todo
        done = await client.patch(f"/todos/{todo['id']}", json={"done": True}, headers=ADA)
        assert done.status_code == 200 and done.json()["done_at"] is not None


async def test_bad_values_get_plain_messages() -> None:
    router: Router = load()["router"]
    async with TestClient(router) as client:
        bad_id = await client.get("/todos/not-a-uuid", headers=ADA)
        assert bad_id.status_code == 400
        bad_body = await client.post(
            "/todos", json={"title": "x", "due": "tomorrow", "priority": "urgent"}, headers=ADA
        )
        assert bad_body.status_code == 422
        errors = " ".join(bad_body.json()["errors"])
        assert "body.due" in errors and "body.priority" in errors and "'high'" in errors


async def test_each_user_sees_only_their_own_todos() -> None:
    router: Router = load()["router"]
    async with TestClient(router) as client:
        todo = await create(client, title="Ada's")
        assert (await client.get(f"/todos/{todo['id']}", headers=BOB)).status_code == 404
        assert (await client.get("/todos", headers=BOB)).json()["total"] == 0
        assert (await client.get("/todos")).status_code == 401


async def test_pagination_and_filters_through_the_page_dependency() -> None:
    router: Router = load()["router"]
    async with TestClient(router) as client:
        for n in range(5):
            await create(client, title=f"t{n}", priority="high" if n % 2 else "low")
        page = (await client.get("/todos?page=2&size=2", headers=ADA)).json()
        assert (page["page"], page["size"], page["total"]) == (2, 2, 5)
        assert [t["title"] for t in page["items"]] == ["t2", "t1"]  # newest first
        high = (await client.get("/todos?priority=high", headers=ADA)).json()
        assert high["total"] == 2
        assert (await client.get("/todos?size=0", headers=ADA)).status_code == 400
        capped = (await client.get("/todos?size=1000", headers=ADA)).json()
        assert capped["size"] == 100


async def test_the_lifespan_opens_the_store_purges_in_the_background_and_closes_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    namespace = load()
    stores: list[Any] = []
    original = namespace["TodoStore"].purge_done

    def watched(self: Any, before: Any) -> int:
        stores.append(self)
        result: int = original(self, before)
        return result

    namespace["TodoStore"].purge_done = watched
    async with TestClient(namespace["router"]) as client:
        await create(client, title="x")
        await trio.sleep(namespace["PURGE_EVERY"] * 2.5)
        assert len(stores) == 2 and stores[0].open  # two purges so far, store open
    assert not stores[0].open  # closed after the server stopped
