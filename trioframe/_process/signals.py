"""SIGINT and SIGTERM for a process serving in a trio run (``Server.run()`` with one
process, and each worker process): the first signal shuts the server down gracefully; a
second one, or a shutdown still running well after its time, ends the process at once."""

from __future__ import annotations

import logging
import os
import signal
from typing import NoReturn

import trio

from .._server.serve import FINAL_GRACE, Server

__all__ = ["HARD_EXIT_GRACE", "watch_signals"]

log = logging.getLogger("trioframe")

#: After ``shutdown_timeout`` and the final grace, how long a shutdown may still take
#: (handlers shielded from cancellation) before the process exits without waiting.
HARD_EXIT_GRACE = 1.0


async def watch_signals(server: Server, cancel_scope: trio.CancelScope) -> None:
    """The first SIGINT/SIGTERM starts ``server``'s graceful shutdown. A second one, or a
    shutdown still running ``shutdown_timeout`` + ``HARD_EXIT_GRACE`` seconds later (a
    handler shielded from cancellation), ends the process at once with status 1. Cancelling
    it stops watching (the signals get their default handlers back)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("%s received: shutting down", signal.Signals(signum).name)
            server.shutdown()
            break
        limit = server.config.timeouts.shutdown_timeout + FINAL_GRACE + HARD_EXIT_GRACE
        with trio.move_on_after(limit):
            async for signum in signals:
                _exit_now(f"second {signal.Signals(signum).name}")
        cancel_scope.cancel()
        _exit_now(f"shutdown still running after {limit:g} s")


def _exit_now(why: str) -> NoReturn:
    """End the process without waiting for anything (connections, shielded handlers)."""
    log.error("%s: exiting now", why)
    logging.shutdown()
    os._exit(1)
