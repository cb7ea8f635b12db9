"""Every way ``trioframe run`` can fail to start, run as a user runs it: one ``trioframe: ...``
line on stderr (never a traceback) and exit status 2 for the command line, 3 for a server or
an application that could not start."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import trioframe._process.cli.entry as cli_main
from trioframe._process.errors import StartupFailure
from trioframe._process.load import load_router

from ._cli import ROOT, assert_one_line, run_cli, write_module

APP = """
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from trioframe import Response, Router


async def hello() -> Response:
    return Response.text("hello")


@asynccontextmanager
async def connect_database() -> AsyncIterator[None]:
    raise RuntimeError("database unreachable")
    yield


router = Router().get("/", hello)
failing_lifespan = Router().lifespan(connect_database).get("/", hello)
not_a_router = {"routes": []}


def create() -> Router:
    return router


def create_nothing() -> dict[str, str]:
    return {}


def create_exploding() -> Router:
    raise ValueError("no settings file")


async def create_async() -> Router:
    return router


def create_with(settings: dict[str, str]) -> Router:
    return router
"""


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    write_module(tmp_path, "app", APP)
    write_module(tmp_path, "needs_a_package", "import os\nimport nosuchpackage_xyz\n")
    write_module(tmp_path, "name_error", "x = 1\ny = undefined_name\n")
    write_module(tmp_path, "syntax_error", "def broken(:\n    pass\n")
    return tmp_path


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (["run", "app:router", "--bogus"], ["unrecognized arguments: --bogus", "--help"]),
        (["run", "app:router", "--port", "http"], ["--port", "'http'"]),
        (["run", "app:router", "--workers", "0"], ["--workers", "'0'"]),
        (["run", "app:router", "--log-level", "loud"], ["--log-level", "'loud'"]),
        (["run", "app"], ["MODULE:ATTR", "'app'"]),
        (["run", "app.py:router"], ["module name", "file path"]),
        (["run"], ["required", "MODULE:ATTR"]),
        ([], ["required", "COMMAND"]),
        (["serve"], ["invalid choice", "'serve'"]),
        (["run", "app:router", "--tls-cert", "c.pem"], ["--tls-cert and --tls-key"]),
        (["run", "app:router", "--tls-key", "k.pem"], ["--tls-cert and --tls-key"]),
        (["run", "app:router", "--self-signed", "--tls-cert", "c.pem"], ["--self-signed"]),
        (["run", "app:router", "--reload", "--workers", "2"], ["--reload", "--workers"]),
        (["run", "app:router", "--reload-dir", "."], ["--reload-dir", "--reload"]),
        (["run", "app:router", "--max-requests-per-worker", "5"], ["--workers above 1"]),
        (["run", "app:router", "--reload-dir", "nowhere", "--reload"], ["not a directory"]),
    ],
)
def test_usage_errors_exit_2(app_dir: Path, arguments: list[str], words: list[str]) -> None:
    done = run_cli(*arguments, cwd=app_dir)
    assert done.returncode == 2
    assert_one_line(done.stderr, *words)


def test_a_bad_port_environment_variable_exits_2(app_dir: Path) -> None:
    done = run_cli("run", "app:router", cwd=app_dir, env={"PORT": "eighty"})
    assert done.returncode == 2
    assert_one_line(done.stderr, "PORT", "'eighty'")


@pytest.mark.parametrize(
    ("target", "status", "words"),
    [
        ("missing_module:router", 2, ["cannot import module 'missing_module'", "No module named"]),
        ("app.sub:router", 2, ["cannot import module 'app.sub'", "not a package"]),
        ("needs_a_package:router", 3, ["importing needs_a_package", "nosuchpackage_xyz"]),
        ("name_error:router", 3, ["NameError", "undefined_name", "name_error.py, line 2"]),
        ("syntax_error:router", 3, ["SyntaxError", "syntax_error.py"]),
        ("app:missing", 2, ["has no attribute 'missing'", "router"]),
        ("app:not_a_router", 2, ["app:not_a_router is a dict, not a Router"]),
        ("app:create_nothing", 2, ["create_nothing returned a dict, not a Router"]),
        ("app:create_async", 2, ["async function"]),
        ("app:create_with", 2, ["takes arguments"]),
        ("app:create_exploding", 3, ["ValueError: no settings file", "app.py, line"]),
    ],
)
def test_targets_that_cannot_be_served(
    app_dir: Path, target: str, status: int, words: list[str]
) -> None:
    done = run_cli("run", target, "--port", "0", cwd=app_dir)
    assert done.returncode == status
    assert_one_line(done.stderr, *words)


@pytest.mark.loopback
def test_a_port_in_use_exits_3(app_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("run", "app:router", "--port", str(port), cwd=app_dir)
    assert done.returncode == 3
    assert_one_line(done.stderr, f"cannot listen on 127.0.0.1:{port}", "in use")


@pytest.mark.loopback
def test_a_lifespan_that_fails_on_startup_exits_3(app_dir: Path) -> None:
    done = run_cli("run", "app:failing_lifespan", "--port", "0", cwd=app_dir)
    assert done.returncode == 3
    assert_one_line(
        done.stderr, "startup failed", "connect_database", "RuntimeError: database unreachable"
    )


def test_a_certificate_that_cannot_be_loaded_exits_3(app_dir: Path) -> None:
    missing = str(app_dir / "missing.pem")
    done = run_cli(
        "run", "app:router", "--port", "0", "--tls-cert", missing, "--tls-key", missing, cwd=app_dir
    )
    assert done.returncode == 3
    assert_one_line(done.stderr, f"cannot load the TLS certificate {missing}")


def test_reload_without_watchfiles_names_the_extra(app_dir: Path) -> None:
    hide_watchfiles = (
        "import sys; sys.modules['watchfiles'] = None; "
        "from trioframe.__main__ import main; raise SystemExit(main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", hide_watchfiles, "run", "app:router", "--reload"],
        cwd=app_dir,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 2
    assert_one_line(
        done.stderr, "--reload needs the reload extra", "pip install 'trioframe[reload]'"
    )


def test_load_router_takes_a_router_or_a_factory(app_dir: Path) -> None:
    sys.path.insert(0, str(app_dir))
    try:
        assert load_router("app:router") is load_router("app:create")
        with pytest.raises(StartupFailure) as info:
            load_router("app:missing")
        assert info.value.status == 2
    finally:
        sys.path.remove(str(app_dir))
        sys.modules.pop("app", None)


def test_load_router_finds_a_module_from_the_current_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(ROOT))])
    assert load_router("examples.hello:router").__class__.__name__ == "Router"


def _broken_loader(target: str) -> None:
    raise RuntimeError("a bug in trioframe")


@pytest.mark.parametrize("level", ["info", "debug"])
def test_an_unexpected_error_is_one_line_and_a_traceback_at_debug(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    level: str,
) -> None:
    monkeypatch.setattr(cli_main, "configure_logging", lambda level: None)
    monkeypatch.setattr(cli_main, "load_served", _broken_loader)
    caplog.set_level(logging.DEBUG if level == "debug" else logging.INFO, logger="trioframe.cli")
    assert cli_main.main(["run", "app:router", "--log-level", level]) == 3
    assert_one_line(
        capsys.readouterr().err, "RuntimeError: a bug in trioframe", "--log-level debug"
    )
    tracebacks = [record for record in caplog.records if record.exc_info]
    assert len(tracebacks) == (1 if level == "debug" else 0)
