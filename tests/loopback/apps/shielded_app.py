"""An app whose handler shields itself from cancellation, for the hard-exit tests:
``python shielded_app.py PORT SHUTDOWN_TIMEOUT``.

``/stuck`` prints ``stuck-started`` and then sleeps for an hour inside a shielded cancel scope,
so graceful shutdown can never finish it: ``Server.run()`` must still end the process.
"""

from __future__ import annotations

import logging
import sys

import trio

from trioframe import Response, Router, Server, ServerConfig


async def stuck() -> Response:
    print("stuck-started", flush=True)
    with trio.CancelScope(shield=True):
        await trio.sleep(3600)
    return Response.text("never")


def main() -> None:
    port, shutdown_timeout = int(sys.argv[1]), float(sys.argv[2])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s %(message)s")
    config = ServerConfig(shutdown_timeout=shutdown_timeout)
    Server(Router().get("/stuck", stuck), f"127.0.0.1:{port}", config).run()
    print("exited-run", flush=True)


if __name__ == "__main__":
    main()
