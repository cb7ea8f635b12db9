"""The middleware benchmark app: the same ``GET /plaintext`` twice, at ``/bare/plaintext``
on a router with no middleware and at ``/mw/plaintext`` behind Logger + Cors + RequestId
(the access log goes to a handler that discards it).

Usage: python bench/apps/middleware_app.py PORT   (binds 127.0.0.1; SIGINT/SIGTERM stop it)
"""

from __future__ import annotations

import logging
import sys

from trioframe import (
    Cors,
    LoggerMiddleware,
    Method,
    RequestIdMiddleware,
    Response,
    Router,
    Server,
)


async def plaintext() -> Response:
    return Response.text("Hello, World!")


access = logging.getLogger("trioframe.access")
access.addHandler(logging.NullHandler())
access.setLevel(logging.INFO)  # lines are formatted and handled, then discarded
access.propagate = False

cors = Cors().allow_any_origin().allowed_methods([Method.GET]).build()
with_middleware = (
    Router()
    .middleware(LoggerMiddleware())
    .middleware(cors)
    .middleware(RequestIdMiddleware())
    .get("/plaintext", plaintext)
)
router = Router().nest("/bare", Router().get("/plaintext", plaintext)).nest("/mw", with_middleware)

if __name__ == "__main__":
    Server(router, f"127.0.0.1:{int(sys.argv[1])}").run()
