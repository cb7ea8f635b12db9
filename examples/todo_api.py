"""A to-do service: JSON CRUD with dates, UUIDs and enums, a store opened by a lifespan, and
dependencies for the current user and for pagination.

What it shows:

* ``Router.lifespan``: the store is opened before the first request and closed after the
  last one; what the lifespan yields is state (``State[TodoStore]``), and a background task
  in the app nursery purges finished to-dos while the server runs.
* Value types: ``UUID`` ids in the path, ``date`` and ``datetime`` fields, a ``StrEnum``
  priority, all read from JSON and query strings and written back by ``Response.json``.
* Dependencies: ``CurrentUser`` reads the ``Authorization`` header once per request and
  ``Page`` reads the paging query; a handler just names them as parameters.

Routes (every one needs ``Authorization: Bearer <name>``; each user sees their own to-dos)::

    GET    /todos?page=1&size=20&priority=high      list, newest first
    POST   /todos                                   create {"title", "due"?, "priority"?}
    GET    /todos/{todo_id}                         one to-do
    PATCH  /todos/{todo_id}                         change {"title"?, "due"?, "priority"?, "done"?}
    DELETE /todos/{todo_id}                         delete

Run it with ``python examples/todo_api.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then for example::

    curl -s -X POST localhost:3000/todos -H 'authorization: Bearer ada' \\
         -H 'content-type: application/json' -d '{"title": "Write docs", "due": "2026-12-01"}'
    curl -s 'localhost:3000/todos?priority=normal' -H 'authorization: Bearer ada'
"""

from __future__ import annotations

import datetime
import enum
import logging
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Self

import attrs
import trio

from trioframe import (
    Error,
    FromRequest,
    Json,
    Path,
    Query,
    Request,
    Response,
    Router,
    Server,
    State,
    StatusCode,
)

#: How often the background task forgets to-dos finished more than ``KEEP_DONE`` ago.
PURGE_EVERY = 60.0
KEEP_DONE = datetime.timedelta(days=7)
MAX_PAGE_SIZE = 100


class Priority(enum.StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


@attrs.frozen
class Todo:
    id: uuid.UUID
    owner: str
    title: str
    created: datetime.datetime
    due: datetime.date | None = None
    priority: Priority = Priority.NORMAL
    done_at: datetime.datetime | None = None


@attrs.frozen
class NewTodo:
    """The body of ``POST /todos``."""

    title: str
    due: datetime.date | None = None
    priority: Priority = Priority.NORMAL


@attrs.frozen
class TodoPatch:
    """The body of ``PATCH /todos/{todo_id}``: every field may be left out."""

    title: str | None = None
    due: datetime.date | None = None
    priority: Priority | None = None
    done: bool | None = None


@attrs.frozen
class ListFilters:
    priority: Priority | None = None


class TodoStore:
    """To-dos by id, in memory. Handlers never await in the middle of a change, so no lock
    is needed."""

    def __init__(self) -> None:
        self._todos: dict[uuid.UUID, Todo] = {}
        self.open = True

    def add(self, owner: str, new: NewTodo) -> Todo:
        now = datetime.datetime.now(datetime.UTC)
        todo = Todo(uuid.uuid4(), owner, new.title, now, new.due, new.priority)
        self._todos[todo.id] = todo
        return todo

    def get(self, owner: str, todo_id: uuid.UUID) -> Todo:
        todo = self._todos.get(todo_id)
        if todo is None or todo.owner != owner:  # someone else's to-do does not exist for you
            raise Error.not_found(f"to-do {todo_id}")
        return todo

    def put(self, todo: Todo) -> Todo:
        self._todos[todo.id] = todo
        return todo

    def remove(self, owner: str, todo_id: uuid.UUID) -> None:
        del self._todos[self.get(owner, todo_id).id]

    def of(self, owner: str, priority: Priority | None) -> list[Todo]:
        mine = [t for t in self._todos.values() if t.owner == owner]
        if priority is not None:
            mine = [t for t in mine if t.priority == priority]
        return sorted(mine, key=lambda todo: todo.created, reverse=True)

    def purge_done(self, before: datetime.datetime) -> int:
        old = [t.id for t in self._todos.values() if t.done_at is not None and t.done_at < before]
        for todo_id in old:
            del self._todos[todo_id]
        return len(old)


async def purge_forever(store: TodoStore) -> None:
    """Forget long-finished to-dos every ``PURGE_EVERY`` seconds, until shutdown cancels it."""
    while True:
        await trio.sleep(PURGE_EVERY)
        store.purge_done(datetime.datetime.now(datetime.UTC) - KEEP_DONE)


@asynccontextmanager
async def open_store(nursery: trio.Nursery) -> AsyncIterator[TodoStore]:
    store = TodoStore()  # a real service would connect to its database here
    nursery.start_soon(purge_forever, store)
    try:
        yield store
    finally:
        store.open = False  # ... and close the connection here


class CurrentUser(FromRequest):
    """The caller, from ``Authorization: Bearer <name>`` (a stand-in for real authentication:
    see examples/auth.py). Resolved once per request, whoever asks for it."""

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    async def from_request(cls, request: Request) -> Self:
        scheme, _, name = (request.header("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not name.strip():
            raise Error.unauthorized("send Authorization: Bearer <your name>")
        return cls(name.strip())


@attrs.frozen
class PageQuery:
    page: int = 1
    size: int = 20


class Page(FromRequest):
    """Which slice of a list to answer, from ``?page=&size=`` (size capped at 100)."""

    def __init__(self, number: int, size: int) -> None:
        self.number = number
        self.size = size

    @classmethod
    async def from_request(cls, request: Request, query: Query[PageQuery]) -> Self:
        if query.page < 1 or query.size < 1:
            raise Error.bad_request("page and size must be at least 1")
        return cls(query.page, min(query.size, MAX_PAGE_SIZE))

    def of(self, items: list[Todo]) -> dict[str, object]:
        start = (self.number - 1) * self.size
        return {
            "items": items[start : start + self.size],
            "page": self.number,
            "size": self.size,
            "total": len(items),
        }


async def list_todos(
    user: CurrentUser, page: Page, filters: Query[ListFilters], store: State[TodoStore]
) -> Response:
    return Response.json(page.of(store.of(user.name, filters.priority)))


async def create_todo(user: CurrentUser, new: Json[NewTodo], store: State[TodoStore]) -> Response:
    if not new.title.strip():
        raise Error.bad_request("body.title: must not be blank")
    todo = store.add(user.name, new)
    return (
        Response.json(todo)
        .with_status(StatusCode.CREATED)
        .with_header("location", f"/todos/{todo.id}")
    )


async def get_todo(
    user: CurrentUser, todo_id: Path[uuid.UUID], store: State[TodoStore]
) -> Response:
    return Response.json(store.get(user.name, todo_id))


async def update_todo(
    user: CurrentUser,
    todo_id: Path[uuid.UUID],
    patch: Json[TodoPatch],
    store: State[TodoStore],
) -> Response:
    todo = store.get(user.name, todo_id)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("title", patch.title),
            ("due", patch.due),
            ("priority", patch.priority),
        )
        if value is not None
    }
    if patch.done is not None:
        changes["done_at"] = datetime.datetime.now(datetime.UTC) if patch.done else None
    return Response.json(store.put(attrs.evolve(todo, **changes)))


async def delete_todo(
    user: CurrentUser, todo_id: Path[uuid.UUID], store: State[TodoStore]
) -> Response:
    store.remove(user.name, todo_id)
    return Response(StatusCode.NO_CONTENT)


#: What the OpenAPI document says of answers the handlers give besides their return values.
NO_CALLER = {401: "no Authorization: Bearer <name>"}
NO_TODO = {**NO_CALLER, 404: "no to-do has this id"}

router = (
    Router()
    .lifespan(open_store)
    .get("/todos", list_todos, responses=NO_CALLER)
    .post("/todos", create_todo, status=201, responses=NO_CALLER)
    .get("/todos/{todo_id}", get_todo, responses=NO_TODO)
    .patch("/todos/{todo_id}", update_todo, responses=NO_TODO)
    .delete("/todos/{todo_id}", delete_todo, responses=NO_TODO)
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
