"""``run_server``: a server as the whole process, what ``Server.run()`` does.

With ``workers`` at 1 the server is served in a new trio run until SIGINT or SIGTERM
(``signals.py``); above 1 this process becomes the supervisor of that many worker processes
(``workers/``). A lifespan that fails to enter is one log line and exit status 3; a task
of the app nursery that raises (its traceback logged when it did) stops the server gracefully
and exits with status 1.
"""

from __future__ import annotations

import logging

import trio

from .._server.serve import Server
from .errors import lifespan_failure
from .signals import watch_signals
from .workers import run_workers, target_of

__all__ = ["run_server"]

log = logging.getLogger("trioframe")


def run_server(server: Server) -> None:
    """``server.run()``: see its docstring for what it raises and how it exits."""
    _log_to_stderr_if_unconfigured()
    if server.config.processes.workers > 1:
        status = run_workers(target_of(server.router), server.host, server.port, server.config)
        if status:
            raise SystemExit(status)
        return
    try:
        trio.run(_run_until_signal, server)
    except Exception as error:
        lifecycle = server._lifecycle
        if lifecycle is not None and lifecycle.task_failures:  # its traceback is logged
            log.error("stopped after a graceful shutdown: a task of the app nursery failed")
            raise SystemExit(1) from None
        if lifecycle is None or lifecycle.failed is None:
            raise
        log.error("startup failed: %s", lifespan_failure(lifecycle.failed.name, error))
        log.debug("the lifespan %s failed", lifecycle.failed.name, exc_info=error)
        raise SystemExit(3) from None


async def _run_until_signal(server: Server) -> None:
    error: Exception | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_signals, server, nursery.cancel_scope)
        try:
            await server.serve()
        except Exception as exc:  # raised below, outside the nursery: not in a group
            error = exc
        nursery.cancel_scope.cancel()
    if error is not None:
        raise error


def _log_to_stderr_if_unconfigured() -> None:
    """A whole process: with no logging configured at all (no handler on the root logger or
    trioframe's), trioframe's INFO lines would vanish; send them to stderr."""
    if logging.getLogger().handlers or log.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    if log.level == logging.NOTSET:
        log.setLevel(logging.INFO)
