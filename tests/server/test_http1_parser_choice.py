"""``ServerConfig.http1_parser``: which HTTP/1.1 adapter serves, and what happens without the
speedups extra."""

from __future__ import annotations

import sys

import pytest

from trioframe import ConfigurationError, Response, Router, Server, ServerConfig
from trioframe._protocol import http1_parsers
from trioframe._protocol.http1 import HTTP1Adapter
from trioframe._protocol.http1_llhttp import LLHTTPAdapter
from trioframe.testing import TestClient


@pytest.fixture
def without_httptools(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the speedups extra were not installed: importing httptools fails."""
    monkeypatch.setitem(sys.modules, "httptools", None)
    monkeypatch.delitem(sys.modules, "trioframe._protocol.http1_llhttp")


def test_each_parser_names_its_adapter() -> None:
    assert http1_parsers.adapter_class("h11") is HTTP1Adapter
    assert http1_parsers.adapter_class("llhttp") is LLHTTPAdapter
    assert http1_parsers.adapter_class("auto") is LLHTTPAdapter  # the extra is installed here


@pytest.mark.usefixtures("without_httptools")
def test_auto_falls_back_to_h11_without_the_extra() -> None:
    assert http1_parsers.adapter_class("auto") is HTTP1Adapter
    assert http1_parsers.adapter_class("h11") is HTTP1Adapter


@pytest.mark.usefixtures("without_httptools")
async def test_llhttp_without_the_extra_fails_at_startup_naming_it() -> None:
    server = Server(Router(), ("127.0.0.1", 0), ServerConfig(http1_parser="llhttp"))
    with pytest.raises(ConfigurationError, match=r"trioframe\[speedups\]"):
        await server.handle_stream(None, None)  # type: ignore[arg-type]  # never reached


def test_an_unknown_parser_is_refused() -> None:
    with pytest.raises(ValueError, match="http1_parser"):
        ServerConfig(http1_parser="picohttpparser")


@pytest.mark.parametrize("parser", ["h11", "llhttp"])
async def test_both_parsers_serve(parser: str) -> None:
    async def hello() -> Response:
        return Response.text("hello")

    router = Router().get("/", hello)
    async with TestClient(router, config=ServerConfig(http1_parser=parser)) as client:
        response = await client.get("/")
        assert (response.status_code, response.text) == (200, "hello")
