"""The worker benchmark's app: ``GET /`` answers with the serving process's id, so the load
generator can count requests per worker. trioframe serves it as ``python workers_app.py
PORT WORKERS [shared]``; Uvicorn serves ``bench.apps.workers_app:starlette_app``."""

from __future__ import annotations

import os
import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from trioframe import Router, Server, ServerConfig


async def pid() -> str:
    return str(os.getpid())


router = Router().get("/", pid)


async def starlette_pid(request: Request) -> Response:
    return PlainTextResponse(str(os.getpid()))


starlette_app = Starlette(routes=[Route("/", starlette_pid)])

if __name__ == "__main__":
    port, workers = int(sys.argv[1]), int(sys.argv[2])
    shared = len(sys.argv) > 3 and sys.argv[3] == "shared"
    config = ServerConfig(workers=workers, reuse_port=not shared)
    Server(router, ("127.0.0.1", port), config).run()
