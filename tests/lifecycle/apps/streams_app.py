"""An app for the shutdown tests in a subprocess: ``python streams_app.py PORT``.

Serves with ``Server.run()`` (SIGINT/SIGTERM: graceful shutdown) on 127.0.0.1:PORT with a
``shutdown_timeout`` of a minute, far longer than the tests wait. ``/events`` is an endless
event stream and ``/poll`` a long poll that answers when shutdown begins; each prints a line
when it is under way. Log lines go to stdout.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator

import trio

from trioframe import Response, Router, Server, ServerConfig, Shutdown


async def endless() -> AsyncIterator[str]:
    yield "first"
    print("events-started", flush=True)
    await trio.sleep_forever()


async def events() -> Response:
    return Response.sse(endless())


async def poll(shutdown: Shutdown) -> Response:
    print("poll-started", flush=True)
    await shutdown.wait()
    return Response.json({"events": []})


def main() -> None:
    port = int(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s %(message)s")
    router = Router().get("/events", events).get("/poll", poll)
    Server(router, f"127.0.0.1:{port}", ServerConfig(shutdown_timeout=60.0)).run()
    print("exited-run", flush=True)


if __name__ == "__main__":
    main()
