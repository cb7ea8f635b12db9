"""The parser and the config builder, in process: every option has a help line, options land
in ``ServerConfig``, the port comes from ``--port``, ``$PORT`` or 3000, and the reloader's child
gets the same options back."""

from __future__ import annotations

import importlib.metadata
import re

import pytest

from trioframe import ServerConfig
from trioframe._process.cli.args import child_arguments, parse_arguments
from trioframe._process.cli.config import build_config, resolve_port
from trioframe._process.errors import StartupFailure

from ._cli import run_cli

#: Every option of ``trioframe run``, as docs/cli.md lists them.
RUN_OPTIONS = [
    "--host",
    "--port",
    "--workers",
    "--http2",
    "--tls-cert",
    "--tls-key",
    "--self-signed",
    "--trusted-proxy",
    "--proxy-headers",
    "--proxy-protocol",
    "--max-requests-per-worker",
    "--max-requests-jitter",
    "--config",
    "--set",
    "--reload",
    "--reload-dir",
    "--log-level",
    "--version",
    "--help",
]


def _help_lines(text: str) -> dict[str, str]:
    """Each option of an argparse help text and the help written after it (wrapped lines
    joined). An option's entry is ``  -h, --help  show ...`` or ``  --port PORT`` with its
    help on the lines below, indented further."""
    helps: dict[str, str] = {}
    current: list[str] = []
    for line in text.splitlines():
        entry = re.fullmatch(r"  (-\S.*?)(?: {2,}(\S.*))?", line)
        if entry:
            current = [spelling.split()[0] for spelling in entry[1].split(", ")]
            for option in current:
                helps[option] = entry[2] or ""
        elif line.startswith("    ") and current:
            for option in current:
                helps[option] = f"{helps[option]} {line.strip()}".strip()
        else:
            current = []
    return helps


def test_run_help_has_a_help_line_for_every_option() -> None:
    done = run_cli("run", "--help")
    assert done.returncode == 0
    helps = _help_lines(done.stdout)
    for option in RUN_OPTIONS:
        assert helps.get(option), f"{option} has no help line in:\n{done.stdout}"
    assert "PORT" in helps["--port"]
    assert "MODULE:ATTR" in done.stdout


def test_top_level_help_lists_its_options_and_the_run_command() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    helps = _help_lines(done.stdout)
    assert helps.get("--version") and helps.get("--help")
    assert re.search(r"^\s+run\s+\S", done.stdout, re.MULTILINE), done.stdout


@pytest.mark.parametrize("arguments", [["--version"], ["run", "--version"]])
def test_version_prints_the_installed_version(arguments: list[str]) -> None:
    done = run_cli(*arguments)
    assert done.returncode == 0
    assert done.stdout == f"trioframe {importlib.metadata.version('trioframe')}\n"


def test_trusted_proxies_and_proxy_options_land_in_the_config() -> None:
    proxies = ["--trusted-proxy", "10.0.0.1", "--trusted-proxy", "192.168.0.0/16"]
    args = parse_arguments(
        ["run", "app:router", *proxies, "--proxy-protocol", "--proxy-headers", "forwarded"]
    )
    config = build_config(args)
    assert config.trusted_proxies == ("10.0.0.1", "192.168.0.0/16")
    assert config.proxy_protocol is True
    assert config.proxy_headers == "forwarded"


def test_defaults_make_the_default_config() -> None:
    assert build_config(parse_arguments(["run", "app:router"])) == ServerConfig()


def test_workers_http2_and_worker_recycling_land_in_the_config() -> None:
    recycling = ["--max-requests-per-worker", "1000", "--max-requests-jitter", "50"]
    args = parse_arguments(["run", "app:router", "--workers", "4", "--http2", *recycling])
    config = build_config(args)
    assert (config.workers, config.http2) == (4, True)
    assert (config.max_requests_per_worker, config.max_requests_jitter) == (1000, 50)


def test_tls_options_land_in_the_config() -> None:
    args = parse_arguments(["run", "app:router", "--tls-cert", "c.pem", "--tls-key", "k.pem"])
    tls = build_config(args).tls
    assert (getattr(tls, "cert_file", None), getattr(tls, "key_file", None)) == ("c.pem", "k.pem")
    self_signed = build_config(parse_arguments(["run", "app:router", "--self-signed"])).tls
    assert "localhost" in getattr(self_signed, "hosts", ())


@pytest.mark.parametrize(
    ("flag", "environ", "port"),
    [
        (["--port", "8001"], {"PORT": "9001"}, 8001),
        ([], {"PORT": "9001"}, 9001),
        ([], {"PORT": ""}, 3000),
        ([], {}, 3000),
    ],
)
def test_the_port_is_the_flag_then_the_environment_then_3000(
    flag: list[str], environ: dict[str, str], port: int
) -> None:
    assert resolve_port(parse_arguments(["run", "app:router", *flag]), environ) == port


@pytest.mark.parametrize("value", ["http", "-1", "70000"])
def test_a_bad_port_environment_variable_is_a_usage_error(value: str) -> None:
    with pytest.raises(StartupFailure, match="PORT environment variable") as info:
        resolve_port(parse_arguments(["run", "app:router"]), {"PORT": value})
    assert info.value.status == 2


def test_the_reloader_child_gets_the_same_options_without_reload() -> None:
    given = ["run", "app:create", "--reload", "--host", "::1", "--http2", "--self-signed"]
    given += ["--trusted-proxy", "unix", "--trusted-proxy", "10.0.0.0/8", "--proxy-protocol"]
    given += ["--proxy-headers", "forwarded", "--log-level", "debug"]
    given += ["--config", "/etc/site.toml", "--set", "http2=true", "--set", "max_body_size=9"]
    args = parse_arguments(given)
    again = parse_arguments(child_arguments(args, 8123))
    assert again.reload is False
    assert again.port == 8123
    for name, value in vars(args).items():
        if name not in ("reload", "reload_dir", "port"):
            assert getattr(again, name) == value, name
