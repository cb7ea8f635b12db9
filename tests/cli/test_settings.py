"""Settings without code: ``--set NAME=VALUE``, the dedicated options, ``TRIOFRAME_<NAME>``
variables, a ``--config`` TOML file and the app's own ``ServerConfig``, each overriding the
next; every setting reachable; a wrong one is one line and status 2; the settings reach the
workers and the reloader's child; ``Server.run()`` fails to start in one line with status 3."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
import trio

import trioframe._process.cli.entry as entry
from trioframe import Server, ServerConfig
from trioframe._process.cli.args import parse_arguments
from trioframe._process.cli.config import build_config
from trioframe._process.errors import StartupFailure
from trioframe._server.config.sources import (
    SettingError,
    from_environ,
    from_pairs,
    from_toml,
    setting_names,
)
from trioframe._server.tls import SelfSigned, TLSFiles

from ._cli import ROOT, assert_one_line, free_port, run_cli, serving, write_module

APP = """
from trioframe import Body, Response, Router, Server, ServerConfig


async def echo(body: Body) -> Response:
    return Response.text(f"{len(body)} bytes")


router = Router().post("/", echo)
server = Server(router, config=ServerConfig(max_body_size=7, max_json_size=7))
"""


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    write_module(tmp_path, "settings_app", APP)
    return tmp_path


def _config(
    *options: str, code: ServerConfig | None = None, environ: dict[str, str] | None = None
) -> ServerConfig:
    return build_config(parse_arguments(["run", "app:router", *options]), code, environ or {})


# -- precedence -------------------------------------------------------------------------------
def test_each_source_overrides_the_next(tmp_path: Path) -> None:
    toml = tmp_path / "settings.toml"
    toml.write_text("max_body_size = 4\nmax_json_size = 4\nheader_timeout = 4.0\nworkers = 4\n")
    code = ServerConfig(max_body_size=5, max_json_size=5, header_timeout=5.0, body_timeout=5.0)
    environ = {"TRIOFRAME_MAX_BODY_SIZE": "3", "TRIOFRAME_MAX_JSON_SIZE": "3"}
    environ["TRIOFRAME_WORKERS"] = "3"
    options = ["--config", str(toml), "--workers", "2", "--set", "max_body_size=1"]
    config = _config(*options, code=code, environ=environ)
    assert config.max_body_size == 1  # --set over everything
    assert config.workers == 2  # a dedicated option over the environment
    assert config.max_json_size == 3  # the environment over the file
    assert config.header_timeout == 4.0  # the file over the code
    assert config.body_timeout == 5.0  # the code over the defaults
    assert config.send_timeout == ServerConfig().send_timeout  # the defaults


def test_set_wins_over_a_dedicated_option_and_the_last_set_wins() -> None:
    config = _config("--workers", "2", "--set", "workers=3", "--set", "workers=4")
    assert config.workers == 4


def test_a_trioframe_table_holds_the_settings_when_there_is_one(tmp_path: Path) -> None:
    toml = tmp_path / "pyproject.toml"
    toml.write_text(
        '[project]\nname = "x"\n\n[trioframe]\ntrusted_proxies = ["10.0.0.1", "unix"]\n'
        'tls = ["c.pem", "k.pem"]\nmax_requests_per_worker = "none"\nhttp2 = true\n'
        "min_body_rate = 10\n"
    )
    assert from_toml(str(toml)) == {
        "trusted_proxies": ("10.0.0.1", "unix"),
        "tls": TLSFiles("c.pem", "k.pem"),
        "max_requests_per_worker": None,
        "http2": True,
        "min_body_rate": 10.0,
    }


@pytest.mark.parametrize(
    ("pair", "value"),
    [
        ("http2=yes", True),
        ("http2=0", False),
        ("http2=OFF", False),
        ("trusted_proxies=10.0.0.1, unix", ("10.0.0.1", "unix")),
        ('trusted_proxies=["10.0.0.1"]', ("10.0.0.1",)),
        ("trusted_proxies=", ()),
        ("websocket_allowed_origins=none", None),
        ("max_requests_per_worker=None", None),
        ("tls=self-signed", SelfSigned()),
        ("tls=c.pem,k.pem,ca.pem", TLSFiles("c.pem", "k.pem", "ca.pem")),
        ("shutdown_timeout=2.5", 2.5),
        ("max-body-size=10", 10),
    ],
)
def test_text_is_read_per_the_settings_type(pair: str, value: Any) -> None:
    assert list(from_pairs([pair]).values()) == [value]


def test_environment_variables_are_trioframe_and_the_name_in_capitals() -> None:
    environ = {"TRIOFRAME_SHUTDOWN_TIMEOUT": "30", "TRIOFRAME_RELOADER_PIPE": "5", "PATH": "/"}
    assert from_environ(environ) == {"shutdown_timeout": 30.0}


@pytest.mark.parametrize(
    ("read", "words"),
    [
        (lambda: from_pairs(["max_bdy_size=1"]), ["max_bdy_size", "did you mean max_body_size"]),
        (lambda: from_pairs(["max_body_size=big"]), ["max_body_size=big", "an integer"]),
        (lambda: from_pairs(["max_body_size=0"]), ["max_body_size", "positive"]),
        (lambda: from_pairs(["http1_parser=fast"]), ["http1_parser", "auto"]),
        (lambda: from_pairs(["http2=maybe"]), ["http2=maybe", "true or false"]),
        (lambda: from_pairs(["tls=c.pem"]), ["tls=c.pem", "CERT_FILE,KEY_FILE"]),
        (lambda: from_pairs(["workers"]), ["NAME=VALUE"]),
        (
            lambda: from_environ({"TRIOFRAME_SHUTDOWN_TIMOUT": "1"}),
            ["TRIOFRAME_SHUTDOWN_TIMOUT", "did you mean TRIOFRAME_SHUTDOWN_TIMEOUT"],
        ),
        (lambda: from_environ({"TRIOFRAME_HEADER_TIMEOUT": "soon"}), ["TRIOFRAME_HEADER_TIMEOUT"]),
    ],
)
def test_a_wrong_setting_is_one_line_naming_it(read: Any, words: list[str]) -> None:
    with pytest.raises(SettingError) as info:
        read()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ("max_body_size = '1'", ["max_body_size", "an integer", "'1'"]),
        ("http2 = 1", ["http2", "true or false"]),
        ("trusted_proxies = '10.0.0.1'", ["trusted_proxies", "list of strings"]),
        ("max_bodysize = 1", ["max_bodysize", "did you mean max_body_size"]),
        ("max_body_size = ", ["not valid TOML"]),
    ],
)
def test_a_wrong_file_is_one_line_naming_it(tmp_path: Path, toml: str, words: list[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml + "\n")
    with pytest.raises(SettingError) as info:
        from_toml(str(path))
    assert "\n" not in str(info.value)
    for word in [str(path), *words]:
        assert word in str(info.value)


def test_settings_that_cannot_work_together_are_a_usage_error() -> None:
    with pytest.raises(StartupFailure, match="--workers above 1") as info:
        _config(environ={"TRIOFRAME_MAX_REQUESTS_PER_WORKER": "10"})
    assert info.value.status == 2
    with pytest.raises(StartupFailure, match="--reload") as info:
        _config("--reload", "--set", "workers=2")


# -- every setting ----------------------------------------------------------------------------
_CHOICES = {"http1_parser": "h11", "proxy_headers": "forwarded"}
#: Settings that mean something only with others.
_ALONG = {
    "max_requests_per_worker": ["workers=2"],
    "max_requests_jitter": ["workers=2", "max_requests_per_worker=10"],
}


def _another_value(field: attrs.Attribute[Any]) -> tuple[str, Any]:
    """A valid value of ``field`` other than its default: as text, and as the config holds it."""
    default: Any = field.default
    kind = str(field.type)
    if field.name in _CHOICES:
        return _CHOICES[field.name], _CHOICES[field.name]
    if kind == "bool":
        return str(not default).lower(), not default
    if kind == "int":
        return str(default + 1), default + 1
    if kind == "float":
        return str(default * 2), default * 2
    if kind == "int | None":
        return "10", 10
    if kind.startswith("tuple[str, ...]"):
        return "https://a.example, https://b.example", ("https://a.example", "https://b.example")
    if kind.startswith("TLSFiles"):
        return "cert.pem,key.pem", TLSFiles("cert.pem", "key.pem")
    raise AssertionError(f"no test value for {field.name} ({kind})")


@pytest.mark.parametrize("field", attrs.fields(ServerConfig), ids=lambda field: field.name)
def test_every_setting_reaches_the_server_through_set(
    field: attrs.Attribute[Any], app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Server] = []
    monkeypatch.chdir(app_dir)
    monkeypatch.setattr(entry, "configure_logging", lambda level: None)
    monkeypatch.setattr(entry, "run_server", lambda server, target: ran.append(server))
    text, value = _another_value(field)
    along = [option for pair in _ALONG.get(field.name, []) for option in ("--set", pair)]
    argv = ["run", "settings_app:router", *along, "--set", f"{field.name}={text}"]
    assert entry.main(argv) == 0
    assert getattr(ran[0].config, field.name) == value
    assert field.name in setting_names()


def test_a_server_named_by_the_target_gives_its_config(
    app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Server] = []
    monkeypatch.chdir(app_dir)
    monkeypatch.setattr(entry, "configure_logging", lambda level: None)
    monkeypatch.setattr(entry, "run_server", lambda server, target: ran.append(server))
    monkeypatch.setenv("TRIOFRAME_MAX_JSON_SIZE", "9")
    assert entry.main(["run", "settings_app:server"]) == 0
    assert (ran[0].config.max_body_size, ran[0].config.max_json_size) == (7, 9)


# -- as a user runs it ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "env", "words"),
    [
        (["--set", "max_bdy_size=1"], {}, ["max_bdy_size", "did you mean max_body_size"]),
        (["--set", "max_body_size=lots"], {}, ["max_body_size=lots", "an integer"]),
        ([], {"TRIOFRAME_SHUTDOWN_TIMEOUT": "-1"}, ["TRIOFRAME_SHUTDOWN_TIMEOUT", "positive"]),
        ([], {"TRIOFRAME_HTTP": "1"}, ["TRIOFRAME_HTTP", "did you mean TRIOFRAME_HTTP2"]),
        (["--config", "missing.toml"], {}, ["missing.toml", "cannot read"]),
    ],
)
def test_a_wrong_setting_exits_2_with_one_line(
    app_dir: Path, arguments: list[str], env: dict[str, str], words: list[str]
) -> None:
    done = run_cli("run", "settings_app:router", *arguments, cwd=app_dir, env=env)
    assert done.returncode == 2
    assert_one_line(done.stderr, *words)


async def _post(port: int, size: int) -> int:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"http://127.0.0.1:{port}/", content=b"x" * size)
        return response.status_code


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["--workers", "2", "--set", "max_body_size=100"], {}),
        (["--set", "workers=2", "--config", "limits.toml"], {}),
        (["--config", "limits.toml"], {"TRIOFRAME_WORKERS": "2"}),
    ],
    ids=["set", "file", "environment"],
)
async def test_workers_serve_with_the_resolved_settings(
    app_dir: Path, options: list[str], env: dict[str, str]
) -> None:
    (app_dir / "limits.toml").write_text("[trioframe]\nmax_body_size = 100\n")
    port = str(free_port())
    with trio.fail_after(30):
        arguments = ("run", "settings_app:router", "--port", port, *options)
        async with serving(*arguments, cwd=app_dir, env=env) as server:
            for _ in range(4):  # several connections: both workers are likely to answer
                assert await _post(server.port, 100) == 200
                assert await _post(server.port, 101) == 413
    assert b"Traceback" not in server.log


@pytest.mark.loopback
async def test_the_reloader_child_serves_with_the_resolved_settings(app_dir: Path) -> None:
    pytest.importorskip("watchfiles", reason="--reload needs watchfiles (the reload extra)")
    (app_dir / "limits.toml").write_text("max_json_size = 50\nmax_body_size = 1000\n")
    arguments = ["run", "settings_app:router", "--port", "0", "--reload"]
    arguments += ["--config", "limits.toml", "--set", "max_body_size=100"]
    with trio.fail_after(30):
        env = {"TRIOFRAME_SHUTDOWN_TIMEOUT": "2"}
        async with serving(*arguments, cwd=app_dir, env=env) as server:
            assert await _post(server.port, 100) == 200
            assert await _post(server.port, 101) == 413


SERVER_RUN = """
import sys
from trioframe import Response, Router, Server, ServerConfig

async def hello() -> Response:
    return Response.text("hello")

config = ServerConfig(proxy_protocol=sys.argv[2] == "proxy-protocol")
Server(Router().get("/", hello), ("127.0.0.1", int(sys.argv[1])), config).run()
"""


def _server_run(app_dir: Path, port: int, mode: str) -> subprocess.CompletedProcess[str]:
    script = write_module(app_dir, "server_run", SERVER_RUN)
    return subprocess.run(
        [sys.executable, str(script), str(port), mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=20,
    )


@pytest.mark.loopback
def test_server_run_reports_an_address_in_use_in_one_line_and_exits_3(app_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _server_run(app_dir, port, "plain")
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in lines[0] and "in use" in lines[0]


def test_server_run_reports_a_configuration_error_in_one_line_and_exits_3(app_dir: Path) -> None:
    done = _server_run(app_dir, 0, "proxy-protocol")
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "trusted_proxies" in lines[0]
