"""The parser of ``trioframe``: its commands and options, the checks argparse can make on one
value, and ``child_arguments`` which writes parsed options back as a command line.

Usage errors are one line on stderr (``trioframe: ...``) and exit status 2, never argparse's
multi-line usage block: the full usage is one ``--help`` away.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
from collections.abc import Sequence
from typing import Any, NoReturn

from ..._server.config import PROXY_HEADERS
from ..._version import __version__
from ..errors import USAGE

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "build_parser", "child_arguments", "parse_arguments"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000
LOG_LEVELS = ("debug", "info", "warning", "error")

_DESCRIPTION = "Serve a trioframe Router over HTTP/1.1 and HTTP/2, plain or over TLS."
_RUN_DESCRIPTION = """\
Serve the Router that MODULE:ATTR names (ATTR may also be a function with no arguments
that returns one) until SIGINT or SIGTERM, then shut down gracefully."""
_RUN_EPILOG = """\
examples:
  trioframe run myapp:router
  PORT=8000 trioframe run myapp:create_app --reload
  trioframe run myapp:router --host 0.0.0.0 --workers 4 --trusted-proxy 10.0.0.0/8

exit status: 0 after a graceful shutdown, 1 when forced to exit, 2 for a usage error,
3 when the server could not start. More in docs/cli.md."""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line; ``commands`` maps each command's name
    to its parser."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        """Print ``trioframe: <message>`` and a pointer to ``--help``; exit with status 2."""
        self.exit(USAGE, f"trioframe: {message} (see '{self.prog} --help')\n")


def version() -> str:
    """The installed distribution's version, else the package's ``__version__``."""
    try:
        return importlib.metadata.version("trioframe")
    except importlib.metadata.PackageNotFoundError:
        return __version__


def target(text: str) -> str:
    """An argparse type: ``MODULE:ATTR`` with a dotted module name (not a file path)."""
    module, sep, attr = text.rpartition(":")
    if not sep or not module or not attr:
        raise argparse.ArgumentTypeError(
            f"expected a module and a name joined by ':' (e.g. examples.hello:router), got {text!r}"
        )
    if module.endswith(".py") or "/" in module or os.sep in module:
        raise argparse.ArgumentTypeError(
            f"expected a module name such as examples.hello, not a file path: {text!r}"
        )
    return text


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number (0-65535), got {text!r}")
    return port


def positive(text: str) -> int:
    """An argparse type: an integer above 0."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def not_negative(text: str) -> int:
    """An argparse type: an integer, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer of 0 or more, got {text!r}")
    return value


def directory(text: str) -> str:
    """An argparse type: an existing directory."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"not a directory: {text!r}")
    return text


def build_parser() -> _Parser:
    """The ``trioframe`` parser with its ``run`` and ``openapi`` commands."""
    parser = _Parser(prog="trioframe", description=_DESCRIPTION, allow_abbrev=False)
    parser.add_argument(
        "--version", action="version", version=f"trioframe {version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="serve a Router (see 'trioframe run --help')",
        description=_RUN_DESCRIPTION,
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    _add_run_options(run)
    parser.commands["run"] = run
    export = commands.add_parser(
        "openapi",
        help="print a Router's OpenAPI document (see 'trioframe openapi --help')",
        description=(
            "Print the OpenAPI 3.1 document of the Router MODULE:ATTR as JSON: the one "
            "Router.openapi() serves, with its title and version (else the options' or the "
            "defaults'). Nothing is served; lifespans are not entered."
        ),
        allow_abbrev=False,
    )
    add = export.add_argument
    add("target", type=target, metavar="MODULE:ATTR", help="the Router, e.g. examples.hello:router")
    add("--output", "-o", metavar="FILE", help="write it to FILE instead of standard output")
    add("--title", help="the document's title (default: Router.openapi()'s, else MODULE)")
    add("--api-version", help="the API's version (default: Router.openapi()'s, else 0.1.0)")
    export.set_defaults(log_level="warning")
    parser.commands["openapi"] = export
    return parser


def _add_run_options(run: argparse.ArgumentParser) -> None:
    add = run.add_argument
    add("target", type=target, metavar="MODULE:ATTR", help="the Router, e.g. examples.hello:router")
    add("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    add("--port", type=port_number, help="port to listen on (default: $PORT, else 3000)")
    add(
        "--workers",
        type=positive,
        metavar="N",
        help="worker processes to serve with (default: 1)",
    )
    add(
        "--http2",
        action="store_true",
        default=None,
        help="also serve HTTP/2 (h2 over TLS, h2c without)",
    )
    add("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate chain")
    add("--tls-key", metavar="FILE", help="the private key of --tls-cert (PEM)")
    add(
        "--self-signed",
        action="store_true",
        default=None,
        help="serve HTTPS with a development certificate made at startup",
    )
    add(
        "--trusted-proxy",
        action="append",
        metavar="ADDR_OR_CIDR",
        help="believe forwarding headers from this proxy (repeatable; 'unix' for a socket)",
    )
    add(
        "--proxy-headers",
        choices=PROXY_HEADERS,
        help="the headers trusted proxies send (default: x-forwarded)",
    )
    add(
        "--proxy-protocol",
        action="store_true",
        default=None,
        help="expect a PROXY protocol header from trusted proxies",
    )
    add(
        "--max-requests-per-worker",
        type=positive,
        metavar="N",
        help="replace a worker after about N requests (needs --workers above 1)",
    )
    add(
        "--max-requests-jitter",
        type=not_negative,
        metavar="N",
        help="lower each worker's figure by a random 0..N (default: 0)",
    )
    add(
        "--config",
        metavar="FILE",
        help="read settings from this TOML file (docs/cli.md, Settings from files ...)",
    )
    add(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="settings",
        help="set any ServerConfig setting, e.g. max_body_size=1048576 (repeatable; wins "
        "over every other source)",
    )
    add("--reload", action="store_true", help="development: restart when a .py file changes")
    add(
        "--reload-dir",
        action="append",
        default=[],
        type=directory,
        metavar="DIR",
        help="watch this directory with --reload (repeatable; default: the current one)",
    )
    add("--log-level", choices=LOG_LEVELS, default="info", help="log level (default: info)")
    add("--version", action="version", version=f"trioframe {version()}", help="print the version")


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse ``argv`` (default ``sys.argv[1:]``); usage errors exit with status 2."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # reported by the command's own parser, so its --help is the one suggested
        command = parser.commands.get(args.command, parser)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def child_arguments(args: argparse.Namespace, port: int) -> list[str]:
    """The ``run`` command line that serves what ``args`` asks for, without ``--reload``
    (what the reloader starts in its child process). ``port`` is the resolved port. Only the
    options given are passed on, so that the child resolves the same settings from the same
    sources (it inherits the environment; ``--config`` is passed as an absolute path)."""
    line = ["run", args.target, "--host", args.host, "--port", str(port)]
    line += ["--log-level", args.log_level]
    for flag in ("http2", "self_signed", "proxy_protocol"):
        if getattr(args, flag):
            line.append("--" + flag.replace("_", "-"))
    for flag in (
        "workers",
        "tls_cert",
        "tls_key",
        "proxy_headers",
        "max_requests_per_worker",
        "max_requests_jitter",
    ):
        if getattr(args, flag) is not None:
            line += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    for proxy in args.trusted_proxy or ():
        line += ["--trusted-proxy", proxy]
    if args.config is not None:
        line += ["--config", os.path.abspath(args.config)]
    for pair in args.settings:
        line += ["--set", pair]
    return line
