"""The command line: ``python -m trioframe run MODULE:ATTR`` (also the ``trioframe`` script).

``ATTR`` names a ``Router`` (or a zero-argument callable returning one) in ``MODULE``.
The server runs until SIGINT/SIGTERM, then shuts down gracefully and exits 0.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from ._routing import Router
from ._server.config import ServerConfig
from ._server.serve import Server

__all__ = ["main"]

_NOT_YET = {
    "workers": "--workers above 1",
    "http2": "--http2",
    "tls_cert": "--tls-cert",
    "tls_key": "--tls-key",
    "self_signed": "--self-signed",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trioframe", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a router")
    run.add_argument("target", help="MODULE:ATTR, e.g. examples.hello:router")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=3000)
    run.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    run.add_argument("--workers", type=int, default=1)
    run.add_argument("--http2", action="store_true")
    run.add_argument("--tls-cert")
    run.add_argument("--tls-key")
    run.add_argument("--self-signed", action="store_true")
    return parser


def load_router(target: str) -> Router:
    """Import ``MODULE:ATTR`` and return the router it names."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"trioframe: expected MODULE:ATTR, got {target!r}")
    if "." not in sys.path:
        sys.path.insert(0, ".")  # so MODULE resolves from the current directory
    module = importlib.import_module(module_name)
    value = getattr(module, attr, None)
    if callable(value) and not isinstance(value, Router):
        value = value()
    if not isinstance(value, Router):
        raise SystemExit(f"trioframe: {target} is not a Router")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m trioframe`` and the ``trioframe`` script."""
    args = _parser().parse_args(argv)
    for name, flag in _NOT_YET.items():
        value = getattr(args, name)
        if value and not (name == "workers" and value == 1):
            raise SystemExit(f"trioframe: {flag} is not available in this version yet")
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    router = load_router(args.target)
    Server(router, (args.host, args.port), ServerConfig()).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
