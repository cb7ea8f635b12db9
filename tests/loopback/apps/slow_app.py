"""A tiny app for the graceful-shutdown test: ``python slow_app.py PORT``.

Serves with ``Server.run()`` (which handles SIGINT/SIGTERM) on 127.0.0.1:PORT. Log lines go
to stdout so the test can wait for "serving on" and "shutting down"; the ``/slow`` handler
prints ``slow-started`` when it begins, then takes one second.
"""

from __future__ import annotations

import logging
import sys

import trio

from trioframe import Response, Router, Server, ServerConfig


async def index() -> Response:
    return Response.text("ok")


async def slow() -> Response:
    print("slow-started", flush=True)
    await trio.sleep(1.0)
    return Response.text("slow done")


def main() -> None:
    port = int(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s %(message)s")
    router = Router().get("/", index).get("/slow", slow)
    Server(router, f"127.0.0.1:{port}", ServerConfig(shutdown_timeout=5.0)).run()
    print("exited-run", flush=True)


if __name__ == "__main__":
    main()
