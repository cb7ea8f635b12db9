"""The application the worker-fleet tests run: ``python fleet_app.py`` serves it with the
settings in ``FLEET_*`` environment variables (workers, heartbeat timeout, request budget, a
lifespan that fails, a file whose presence makes importing the application fail), and a
route that starts a job in the app nursery which fails."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from trioframe import Request, Router, Server, ServerConfig, State

#: While the file this names exists, a worker cannot import the application (a broken deploy).
BROKEN_WHILE = os.environ.get("FLEET_BROKEN_WHILE")
if __name__ != "__main__" and BROKEN_WHILE and os.path.exists(BROKEN_WHILE):
    raise RuntimeError("the application cannot be imported now")


async def pid() -> str:
    return str(os.getpid())


async def slow(request: Request) -> str:
    print("slow request started", file=sys.stderr, flush=True)  # the tests wait for it
    await trio.sleep(float(request.query("seconds") or 1))
    return f"slept {os.getpid()}"


async def block() -> str:
    time.sleep(3600)  # noqa: ASYNC251 (blocks its event loop on purpose: the heartbeat catches it)
    return "never"


@asynccontextmanager
async def failing_lifespan() -> AsyncIterator[None]:
    if os.environ.get("FLEET_FAIL") == "1":
        raise ConnectionError("the database is unreachable")
    yield


class Jobs:
    """The app nursery, for a handler to start a job in."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery


@asynccontextmanager
async def jobs(nursery: trio.Nursery) -> AsyncIterator[Jobs]:
    yield Jobs(nursery)


async def failing_job() -> None:
    raise RuntimeError("the nightly job failed")


async def fail_later(started: State[Jobs]) -> str:
    started.nursery.start_soon(failing_job)  # its failure stops this worker (status 1)
    return str(os.getpid())


router = (
    Router()
    .get("/", pid)
    .get("/slow", slow)
    .get("/block", block)
    .get("/fail-later", fail_later)
    .lifespan(failing_lifespan)
    .lifespan(jobs)
)


def config() -> ServerConfig:
    budget = os.environ.get("FLEET_MAX_REQUESTS")
    return ServerConfig(
        workers=int(os.environ.get("FLEET_WORKERS", "2")),
        worker_heartbeat_timeout=float(os.environ.get("FLEET_HEARTBEAT", "30")),
        max_requests_per_worker=int(budget) if budget else None,
        shutdown_timeout=5.0,
        reuse_port=os.environ.get("FLEET_REUSE_PORT", "1") == "1",
    )


if __name__ == "__main__":
    Server(router, ("127.0.0.1", 0), config()).run()
