"""The application of the fleet rate-limit test: ``python fleet_app.py`` serves two workers on
127.0.0.1 (port 0, in its serving line), limited to 10 requests a minute per client in the
Redis at ``FLEET_REDIS_URL``; every response says which worker answered (``X-Worker``)."""

from __future__ import annotations

import os

from trioframe import RedisStore, Request, Response, Router, Server, ServerConfig
from trioframe.middleware import RateLimitMiddleware
from trioframe.middleware._headers import set_header


async def hello() -> str:
    return "hi"


async def worker(request: Request, next: object) -> Response:
    response: Response = await next(request)  # type: ignore[operator]
    set_header(response, b"x-worker", str(os.getpid()).encode())
    return response


store = RedisStore(os.environ.get("FLEET_REDIS_URL", "redis://127.0.0.1:6379/0"))
router = (
    Router()
    .get("/", hello)
    .middleware(worker)
    .middleware(RateLimitMiddleware(10, per_seconds=60, store=store))
)

if __name__ == "__main__":
    config = ServerConfig(workers=2, shutdown_timeout=5.0, reuse_port=True)
    Server(router, ("127.0.0.1", 0), config).run()
