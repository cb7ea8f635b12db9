"""The extractor benchmark app: ``/users/{id}`` (a handler taking ``Request``) beside
``/extract/{id}`` with three typed extractors (``Path[int]``, ``Query[Filters]``,
``Json[Item]``).

Usage: python bench/apps/extract_app.py PORT   (binds 127.0.0.1; SIGINT/SIGTERM stop it)
"""

from __future__ import annotations

import sys

import attrs

from trioframe import Json, Path, Query, Request, Response, Router, Server


@attrs.define
class Filters:
    page: int = 1
    active: bool = False


@attrs.define
class Item:
    name: str
    price: float


async def user(request: Request) -> Response:
    uid = int(request.params["id"])
    return Response.json({"id": uid, "name": f"user{uid}"})


async def extract(uid: Path[int], filters: Query[Filters], item: Json[Item]) -> Response:
    return Response.json({"id": uid, "page": filters.page, "name": item.name})


router = Router().get("/users/{id}", user).post("/extract/{id}", extract)

if __name__ == "__main__":
    Server(router, f"127.0.0.1:{int(sys.argv[1])}").run()
