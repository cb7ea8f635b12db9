"""An instance of the nginx fleet test: ``python proxied_app.py PORT`` serves on
127.0.0.1:PORT, trusting nginx on 127.0.0.1, and answers with what it knows of the client."""

from __future__ import annotations

import os
import sys

import trio

from trioframe import Request, Response, Router, Server, ServerConfig


async def whoami(request: Request) -> Response:
    return Response.json(
        {
            "client": request.client[0] if request.client else None,
            "peer": request.peer[0] if request.peer else None,
            "scheme": request.scheme,
            "host": request.header("host"),
            "pid": os.getpid(),
        }
    )


async def slow() -> str:
    await trio.sleep(0.3)
    return f"slow {os.getpid()}"


router = Router().get("/", whoami).get("/slow", slow)

if __name__ == "__main__":
    config = ServerConfig(trusted_proxies=["127.0.0.1"], shutdown_timeout=5.0)
    Server(router, ("127.0.0.1", int(sys.argv[1])), config).run()
