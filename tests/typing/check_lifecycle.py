"""Type tests for lifecycle (``mypy --strict``, not run by pytest): ``Router.lifespan`` chains
and decorates, and ``Shutdown`` is a plain class to a type checker."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import assert_type

import trio

from trioframe import Router, Shutdown


@asynccontextmanager
async def lifespan(nursery: trio.Nursery) -> AsyncIterator[int]:
    yield 1


assert_type(Router().lifespan(lifespan), Router)

router = Router()


@router.lifespan()
@asynccontextmanager
async def decorated() -> AsyncIterator[None]:
    yield


def keeps(function: Callable[[], AbstractAsyncContextManager[None]]) -> None: ...


keeps(decorated)  # the decorator gives the function back, still callable as a lifespan


async def poll(shutdown: Shutdown) -> bool:
    await shutdown.wait()
    return shutdown.is_set()
