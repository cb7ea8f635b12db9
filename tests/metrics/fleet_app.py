"""A fleet with metrics, for the multiprocess tests: ``python fleet_app.py`` serves this
router with two workers on 127.0.0.1, port 0 (the supervisor's serving line says which).
Every answer says which worker gave it (``x-worker``: its pid)."""

from __future__ import annotations

import os

from trioframe import Next, Request, Response, Router, Server, ServerConfig


async def hello() -> str:
    return "hello"


async def directory() -> str:
    """Where this worker's metrics go (set by the supervisor, or by the user)."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


async def worker_header(request: Request, next_: Next) -> Response:
    return (await next_(request)).with_header("x-worker", str(os.getpid()))


router = Router().get("/", hello).get("/directory", directory).middleware(worker_header)
router.metrics()

if __name__ == "__main__":
    Server(router, ("127.0.0.1", 0), ServerConfig(workers=2, shutdown_timeout=5.0)).run()
