"""From parsed options to what the server needs: the port (``--port``, else ``$PORT``, else
3000) and the ``ServerConfig``, made from every source of settings in their order of
precedence (docs/cli.md, Settings from files and the environment), refusing wrong settings and
the combinations that cannot work (status 2)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any, NoReturn

import attrs

from ..._server.config import ServerConfig
from ..._server.config.sources import SettingError, from_environ, from_pairs, from_toml
from ..._server.tls import SelfSigned, TLSFiles
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


def check_flags(args: argparse.Namespace) -> None:
    """Refuse (status 2) options that contradict each other or mean nothing alone."""
    if args.self_signed and (args.tls_cert or args.tls_key):
        _refuse("--self-signed cannot be combined with --tls-cert/--tls-key")
    if bool(args.tls_cert) != bool(args.tls_key):
        _refuse("--tls-cert and --tls-key go together")
    if args.reload_dir and not args.reload:
        _refuse("--reload-dir only means something with --reload")


def check_combinations(args: argparse.Namespace, config: ServerConfig) -> None:
    """Refuse (status 2) resolved settings that cannot work together, wherever they came
    from."""
    processes = config.processes
    if args.reload and processes.workers > 1:
        _refuse(
            "--reload is for development and serves one process: it cannot use --workers "
            f"(workers is {processes.workers})"
        )
    if processes.max_requests_per_worker is not None and processes.workers < 2:
        _refuse("max_requests_per_worker (--max-requests-per-worker) needs --workers above 1")
    if processes.max_requests_jitter and processes.max_requests_per_worker is None:
        _refuse("max_requests_jitter (--max-requests-jitter) needs --max-requests-per-worker")


def flag_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the dedicated options give (only those given)."""
    settings: dict[str, Any] = {}
    for name in (
        "workers",
        "http2",
        "proxy_headers",
        "proxy_protocol",
        "max_requests_per_worker",
        "max_requests_jitter",
    ):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if args.trusted_proxy is not None:
        settings["trusted_proxies"] = tuple(args.trusted_proxy)
    if args.tls_cert:
        settings["tls"] = TLSFiles(args.tls_cert, args.tls_key)
    if args.self_signed:
        settings["tls"] = SelfSigned(tuple(dict.fromkeys([args.host, "localhost"])))
    return settings


def build_config(
    args: argparse.Namespace,
    code: ServerConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerConfig:
    """The ``ServerConfig`` to serve with. Each source overrides the ones after it:
    ``--set``, the dedicated options, ``TRIOFRAME_<NAME>`` variables of ``environ`` (default
    ``os.environ``), the ``--config`` file, ``code`` (the config of the ``Server`` the target
    names), the defaults. A wrong setting anywhere is a ``StartupFailure`` (status 2)."""
    check_flags(args)
    try:
        layers = [
            from_toml(args.config) if args.config is not None else {},
            from_environ(os.environ if environ is None else environ),
            flag_settings(args),
            from_pairs(args.settings),
        ]
    except SettingError as error:
        raise StartupFailure(str(error), USAGE) from None
    settings = {name: value for layer in layers for name, value in layer.items()}
    try:
        config = attrs.evolve(code or ServerConfig(), **settings)
    except ValueError as error:  # each value was checked alone: this is a combination
        raise StartupFailure(str(error), USAGE) from None
    check_combinations(args, config)
    return config


def _refuse(message: str) -> NoReturn:
    raise StartupFailure(message, USAGE)
