"""A router whose lifespan starts a task that raises once the server serves, for
``Server.run()`` and ``trioframe run`` in a subprocess (``python failing_task.py PORT``)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from trioframe import Response, Router, Server


async def refresh_cache() -> None:
    await trio.sleep(0.2)
    raise RuntimeError("the cache refresh failed")


@asynccontextmanager
async def cache(nursery: trio.Nursery) -> AsyncIterator[None]:
    nursery.start_soon(refresh_cache)
    yield


async def hello() -> Response:
    return Response.text("hi")


router = Router().lifespan(cache).get("/", hello)

if __name__ == "__main__":
    Server(router, ("127.0.0.1", int(sys.argv[1]))).run()
