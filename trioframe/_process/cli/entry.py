"""The entry point: parse, configure logging, then serve in this process, with worker
processes, or under the reloader; every failure becomes one ``trioframe: ...`` line on stderr
and an exit status (see docs/cli.md)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from ..._server.serve import Server
from ..errors import STARTUP, StartupFailure
from ..load import load_served
from ..run import run_server
from .args import child_arguments, parse_arguments
from .config import build_config, resolve_port
from .export import export_openapi
from .logs import configure_logging
from .reload import KILL_MARGIN, Reloader, python_command, require_watchfiles, stop_with_reloader

__all__ = ["main"]

log = logging.getLogger("trioframe.cli")

#: Exit status after Ctrl-C before the server started (the server's own forced exit).
INTERRUPTED = 1
_DEBUG_HINT = "run with --log-level debug for the traceback"


def main(argv: Sequence[str] | None = None) -> int:
    """``trioframe`` (and ``python -m trioframe``): run the command in ``argv`` (default
    ``sys.argv[1:]``) and return the exit status."""
    args = parse_arguments(argv)
    configure_logging(args.log_level)
    try:
        return export_openapi(args) if args.command == "openapi" else run(args)
    except StartupFailure as failure:
        return _fail(str(failure), failure.status)
    except KeyboardInterrupt:
        return _fail("interrupted before the server started", INTERRUPTED)
    except Exception as error:
        log.debug("unexpected error", exc_info=error)
        return _fail(f"unexpected {type(error).__name__}: {error} ({_DEBUG_HINT})", STARTUP)


def run(args: argparse.Namespace) -> int:
    """The ``run`` command; raises ``StartupFailure`` for what the user can fix."""
    port = resolve_port(args)
    config = build_config(args)  # wrong settings fail here, before the app is imported
    if args.reload:  # the child resolves the same settings (with the app's own config)
        require_watchfiles()
        command = python_command(child_arguments(args, port))
        directories = args.reload_dir or ["."]
        return Reloader(command, directories, config.timeouts.shutdown_timeout + KILL_MARGIN).run()
    stop_with_reloader()
    router, code = load_served(args.target)  # also with workers: a wrong target fails here
    if code is not None:
        config = build_config(args, code)
    try:  # a bind failure or a ConfigurationError: one line, SystemExit(3)
        run_server(Server(router, (args.host, port), config), target=args.target)
    except SystemExit as exit:  # a lifespan failed to enter: the server logged one line
        if isinstance(exit.code, int):
            return exit.code
        raise
    return 0


def _fail(message: str, status: int) -> int:
    print(f"trioframe: {message}", file=sys.stderr, flush=True)
    return status
