"""From parsed options to what the server needs: the port (``--port``, else ``$PORT``, else
3000) and the ``ServerConfig``, refusing the combinations that cannot work (status 2)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import NoReturn

from ..._server.config import ServerConfig
from ..errors import USAGE, StartupFailure
from .args import DEFAULT_PORT

__all__ = ["build_config", "resolve_port"]


def resolve_port(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    """``--port`` when given, else the ``PORT`` environment variable (when set and not
    empty), else 3000."""
    if args.port is not None:
        return int(args.port)
    text = (os.environ if environ is None else environ).get("PORT", "").strip()
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise StartupFailure(
            f"the PORT environment variable must be a port number (0-65535), not {text!r}",
            USAGE,
        )
    return int(text)


def check_combinations(args: argparse.Namespace) -> None:
    """Refuse (status 2) options that contradict each other or mean nothing alone."""
    if args.self_signed and (args.tls_cert or args.tls_key):
        _refuse("--self-signed cannot be combined with --tls-cert/--tls-key")
    if bool(args.tls_cert) != bool(args.tls_key):
        _refuse("--tls-cert and --tls-key go together")
    if args.reload and args.workers > 1:
        _refuse("--reload is for development and serves one process: it cannot use --workers")
    if args.reload_dir and not args.reload:
        _refuse("--reload-dir only means something with --reload")
    if args.max_requests_per_worker is not None and args.workers < 2:
        _refuse("--max-requests-per-worker needs --workers above 1")
    if args.max_requests_jitter and args.max_requests_per_worker is None:
        _refuse("--max-requests-jitter needs --max-requests-per-worker")


def build_config(args: argparse.Namespace) -> ServerConfig:
    """The ``ServerConfig`` the options ask for (after ``check_combinations``)."""
    check_combinations(args)
    try:
        config = ServerConfig(
            workers=args.workers,
            http2=args.http2,
            trusted_proxies=args.trusted_proxy,
            proxy_headers=args.proxy_headers,
            proxy_protocol=args.proxy_protocol,
            max_requests_per_worker=args.max_requests_per_worker,
            max_requests_jitter=args.max_requests_jitter,
        )
    except ValueError as error:  # the parser's types should have caught it first
        raise StartupFailure(str(error), USAGE) from None
    if args.tls_cert:
        return config.with_tls(args.tls_cert, args.tls_key)
    if args.self_signed:
        return config.with_self_signed(hosts=dict.fromkeys([args.host, "localhost"]))
    return config


def _refuse(message: str) -> NoReturn:
    raise StartupFailure(message, USAGE)
