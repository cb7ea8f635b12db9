"""``run_server``: a server as the whole process, what ``Server.run()`` does.

With ``workers`` at 1 the server is served in a new trio run until SIGINT or SIGTERM
(``signals.py``); above 1 this process becomes the supervisor of that many worker processes
(``workers/``). A server that cannot start (an address it cannot bind, a
``ConfigurationError``, a lifespan that fails to enter) is one log line (the traceback at DEBUG
level) and exit status 3, as on the command line; a task
of the app nursery that raises (its traceback logged when it did) stops the server gracefully
and exits with status 1.
"""

from __future__ import annotations

import logging
from typing import NoReturn

import trio

from .._errors import ConfigurationError
from .._server.serve import Server
from .errors import STARTUP, lifespan_failure
from .signals import watch_signals
from .workers import run_workers, target_of

__all__ = ["run_server"]

log = logging.getLogger("trioframe")


def run_server(server: Server, target: str | None = None) -> None:
    """``server.run()``: see its docstring for how it exits. ``target``: how worker
    processes import the router (default: found from the router itself)."""
    _log_to_stderr_if_unconfigured()
    try:
        _run(server, target)
    except OSError as error:
        _cannot_start(f"cannot listen on {_address(server.host, server.port)}: {error}", error)
    except ConfigurationError as error:
        _cannot_start(str(error), error)


def _cannot_start(message: str, error: Exception) -> NoReturn:
    """A server that could not start: one line (the traceback at DEBUG), status 3."""
    log.error("%s", message)
    log.debug("the server could not start", exc_info=error)
    raise SystemExit(STARTUP) from None


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _run(server: Server, target: str | None) -> None:
    if server.config.processes.workers > 1:
        where = target or target_of(server.router)
        status = run_workers(where, server.host, server.port, server.config)
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
        raise SystemExit(STARTUP) from None


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
