"""A CRUD API for items, kept in an in-memory store shared through application state.

What it shows:

* ``Router().state(Store())`` registers the store once; handlers read it with
  ``store: State[Store]``.
* ``Json[NewItem]`` for request bodies (a body that does not fit ``NewItem`` is a 422 from the
  framework), ``Path[int]`` for ids (``/items/abc`` is a 400) and ``Query[ListParams]`` for
  the listing's paging and filters.
* Typed returns: ``get_item`` returns the ``Item`` itself (written as JSON), ``delete_item``
  nothing, on a route registered with ``status=204``.
* The OpenAPI document at ``/openapi.json`` (``Router.openapi``), with the 404 of the item
  routes declared by ``responses=``.
* Status codes: 201 Created (with ``Location``) on create, 204 No Content on delete, 404 for a
  missing item, 400 for a bad query or one invalid field, and 422 through
  ``Response.validation_error`` when several fields are invalid at once.

Routes::

    GET    /items?page=1&page_size=20&min_price=1&max_price=10   list (page_size capped at 100)
    POST   /items                                                create  {"name", "price", "description"?}
    GET    /items/{item_id}                                      one item
    PUT    /items/{item_id}                                      replace (same body as create)
    PATCH  /items/{item_id}                                      change the fields given
    DELETE /items/{item_id}                                      delete

Run it with ``python examples/rest_api.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then for example::

    curl -i -X POST localhost:3000/items -H 'content-type: application/json' \\
         -d '{"name": "Widget", "price": 9.5}'
    curl 'localhost:3000/items?min_price=5&page_size=10'
"""

from __future__ import annotations

import logging
import os

import attrs

from trioframe import Error, Json, Path, Query, Response, Router, Server, State, StatusCode

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


@attrs.frozen
class Item:
    id: int
    name: str
    price: float
    description: str = ""


@attrs.frozen
class NewItem:
    """The body of ``POST /items`` and ``PUT /items/{item_id}``."""

    name: str
    price: float
    description: str = ""


@attrs.frozen
class ItemPatch:
    """The body of ``PATCH /items/{item_id}``: every field may be left out."""

    name: str | None = None
    price: float | None = None
    description: str | None = None


@attrs.frozen
class ListParams:
    """The query string of ``GET /items``; absent fields take these defaults."""

    page: int = 1
    page_size: int = DEFAULT_PAGE_SIZE
    min_price: float | None = None
    max_price: float | None = None


class Store:
    """Items by id. Handlers run in one trio thread and never await in the middle of a
    change, so no lock is needed."""

    def __init__(self) -> None:
        self._items: dict[int, Item] = {}
        self._next_id = 1

    def add(self, new: NewItem) -> Item:
        item = Item(self._next_id, new.name, new.price, new.description)
        self._items[item.id] = item
        self._next_id += 1
        return item

    def get(self, item_id: int) -> Item:
        try:
            return self._items[item_id]
        except KeyError:
            raise Error.not_found(f"item {item_id}") from None

    def put(self, item: Item) -> Item:
        self._items[item.id] = item
        return item

    def remove(self, item_id: int) -> None:
        if self._items.pop(item_id, None) is None:
            raise Error.not_found(f"item {item_id}")

    def all(self) -> list[Item]:
        return sorted(self._items.values(), key=lambda item: item.id)


def problems_with(name: str | None, price: float | None) -> list[str]:
    """What is wrong with the fields given (``None`` means "not given")."""
    problems: list[str] = []
    if name is not None and not name.strip():
        problems.append("body.name: must not be blank")
    if price is not None and price < 0:
        problems.append("body.price: must not be negative")
    return problems


def rejection(problems: list[str]) -> Response | None:
    """``None`` when there is nothing wrong; one problem is a 400, several a 422 listing all
    of them."""
    if len(problems) == 1:
        raise Error.bad_request(problems[0])
    if problems:
        return Response.validation_error(problems)
    return None


async def list_items(params: Query[ListParams], store: State[Store]) -> Response:
    if params.page < 1:
        raise Error.bad_request("page must be at least 1")
    if params.page_size < 1:
        raise Error.bad_request("page_size must be at least 1")
    if (
        params.min_price is not None
        and params.max_price is not None
        and params.min_price > params.max_price
    ):
        raise Error.bad_request("min_price must not be greater than max_price")
    page_size = min(params.page_size, MAX_PAGE_SIZE)
    matching = [
        item
        for item in store.all()
        if (params.min_price is None or item.price >= params.min_price)
        and (params.max_price is None or item.price <= params.max_price)
    ]
    start = (params.page - 1) * page_size
    return Response.json(
        {
            "items": matching[start : start + page_size],
            "page": params.page,
            "page_size": page_size,
            "total": len(matching),
        }
    )


async def create_item(new: Json[NewItem], store: State[Store]) -> Response:
    if (rejected := rejection(problems_with(new.name, new.price))) is not None:
        return rejected
    item = store.add(new)
    return (
        Response.json(item)
        .with_status(StatusCode.CREATED)
        .with_header("location", f"/items/{item.id}")
    )


async def get_item(item_id: Path[int], store: State[Store]) -> Item:
    return store.get(item_id)


async def replace_item(item_id: Path[int], new: Json[NewItem], store: State[Store]) -> Response:
    current = store.get(item_id)
    if (rejected := rejection(problems_with(new.name, new.price))) is not None:
        return rejected
    return Response.json(store.put(Item(current.id, new.name, new.price, new.description)))


async def update_item(item_id: Path[int], patch: Json[ItemPatch], store: State[Store]) -> Response:
    current = store.get(item_id)
    if (rejected := rejection(problems_with(patch.name, patch.price))) is not None:
        return rejected
    changes = {k: v for k, v in attrs.asdict(patch).items() if v is not None}
    return Response.json(store.put(attrs.evolve(current, **changes)))


async def delete_item(item_id: Path[int], store: State[Store]) -> None:
    store.remove(item_id)


#: What the OpenAPI document says of a route that answers 404 for an unknown id.
MISSING_ITEM = {404: "no item has this id"}

router = (
    Router()
    .state(Store())
    .get("/items", list_items)
    .post("/items", create_item, status=201)
    .get("/items/{item_id}", get_item, responses=MISSING_ITEM)
    .put("/items/{item_id}", replace_item, responses=MISSING_ITEM)
    .patch("/items/{item_id}", update_item, responses=MISSING_ITEM)
    .delete("/items/{item_id}", delete_item, status=204, responses=MISSING_ITEM)
    .openapi(title="Items", version="1.0.0")
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
