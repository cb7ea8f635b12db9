"""``ServerConfig`` values and what the server does with them at startup."""

from __future__ import annotations

import builtins
import pathlib
import re
from typing import Any

import attrs
import pytest

from trioframe import ConfigurationError, Response, Router, Server, ServerConfig
from trioframe._server.tls import TLSFiles
from trioframe.testing import TestClient


async def ok() -> Response:
    return Response.text("ok")


def test_defaults_match_the_contract() -> None:
    config = ServerConfig()
    assert config.max_body_size == 10 * 1024 * 1024
    assert config.max_header_size == 16 * 1024
    assert config.max_request_line_size == 8 * 1024
    assert config.max_header_count == 100
    assert (config.keep_alive_timeout, config.header_timeout) == (5.0, 10.0)
    assert (config.body_timeout, config.send_timeout) == (30.0, 60.0)
    assert config.min_body_rate == 1024.0
    assert config.max_requests_per_connection == 1000
    assert config.max_connections == 1000
    assert config.shutdown_timeout == 10.0
    assert config.cancel_on_disconnect is True


def test_with_copies_and_leaves_the_original() -> None:
    base = ServerConfig()
    changed = base.with_max_body_size(1024).with_header_timeout(1.5)
    assert (changed.max_body_size, changed.header_timeout) == (1024, 1.5)
    assert base.max_body_size == 10 * 1024 * 1024
    assert base.with_http2().http2 is True
    assert base.with_tls("cert.pem", "key.pem").tls == TLSFiles("cert.pem", "key.pem")
    with pytest.raises(AttributeError):
        base.with_no_such_field(1)


def test_config_is_frozen_and_validated() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ServerConfig().max_body_size = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="max_body_size"):
        ServerConfig(max_body_size=0)
    with pytest.raises(ValueError, match="header_timeout"):
        ServerConfig(header_timeout=-1.0)
    with pytest.raises(ValueError, match="min_body_rate"):
        ServerConfig(min_body_rate=0)


def test_min_body_rate_has_its_with_method() -> None:
    assert ServerConfig().with_min_body_rate(512.0).min_body_rate == 512.0


def test_http2_max_frames_per_step() -> None:
    assert ServerConfig().http2_max_frames_per_step == 64
    assert ServerConfig().with_http2_max_frames_per_step(8).http2_max_frames_per_step == 8
    with pytest.raises(ValueError, match="http2_max_frames_per_step"):
        ServerConfig(http2_max_frames_per_step=0)


async def test_serve_refuses_workers_which_need_processes() -> None:
    server = Server(Router().get("/", ok), ("127.0.0.1", 0), ServerConfig(workers=2))
    with pytest.raises(ConfigurationError, match=r"workers > 1 needs worker processes"):
        await server.serve()


async def test_tls_files_that_cannot_be_loaded_fail_at_startup(tmp_path: pathlib.Path) -> None:
    config = ServerConfig().with_tls(tmp_path / "missing.pem", tmp_path / "missing.key")
    with pytest.raises(
        ConfigurationError, match=re.escape(f"cannot load the TLS certificate {tmp_path}")
    ):
        async with TestClient(Router().get("/", ok), config):
            pass


async def test_http2_without_h2_installed_fails_at_startup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_import = builtins.__import__

    def without_h2(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "h2" or name.startswith("h2."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_h2)
    with pytest.raises(ConfigurationError, match=r"pip install 'trioframe\[http2\]'"):
        async with TestClient(Router().get("/", ok), ServerConfig(http2=True)):
            pass
    async with TestClient(Router().get("/", ok)) as client:  # HTTP/1.1 needs no h2
        assert (await client.get("/")).status_code == 200
