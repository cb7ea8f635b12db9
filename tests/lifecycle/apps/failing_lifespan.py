"""A router whose lifespan fails while entering, for ``trioframe run`` in a subprocess."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from trioframe import Router


@asynccontextmanager
async def connect_database() -> AsyncIterator[None]:
    raise RuntimeError("database unreachable")
    yield


router = Router().lifespan(connect_database)
