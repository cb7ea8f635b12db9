"""The command line: ``python -m trioframe run MODULE:ATTR`` (also the ``trioframe`` script).

``ATTR`` names a ``Router`` (or a zero-argument callable returning one) in ``MODULE``.
The server runs until SIGINT/SIGTERM, then shuts down gracefully and exits 0. A broken router
or a lifespan that fails while entering is one line on stderr and exit status 3.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from ._errors import ConfigurationError
from ._routing import Router
from ._server.config import ServerConfig
from ._server.serve import Server

__all__ = ["main"]

_NOT_YET = {
    "workers": "--workers above 1",
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
    run.add_argument(
        "--http2",
        action="store_true",
        help="also serve HTTP/2: ALPN h2 over TLS, prior-knowledge h2c on cleartext",
    )
    run.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate chain")
    run.add_argument("--tls-key", help="the private key of --tls-cert (PEM)")
    run.add_argument(
        "--self-signed",
        action="store_true",
        help="serve HTTPS with a development certificate made at startup (extra: self-signed)",
    )
    return parser


def _config(args: argparse.Namespace) -> ServerConfig:
    """The ``ServerConfig`` the flags ask for; exits with status 2 on a bad combination."""
    config = ServerConfig(http2=args.http2)
    if args.self_signed and (args.tls_cert or args.tls_key):
        raise SystemExit("trioframe: --self-signed cannot be combined with --tls-cert/--tls-key")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise SystemExit("trioframe: --tls-cert and --tls-key go together")
    if args.tls_cert:
        config = config.with_tls(args.tls_cert, args.tls_key)
    elif args.self_signed:
        config = config.with_self_signed(hosts=dict.fromkeys([args.host, "localhost"]))
    return config


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
    config = _config(args)
    router = load_router(args.target)
    try:
        Server(router, (args.host, args.port), config).run()
    except ConfigurationError as error:
        print(f"trioframe: {error}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
