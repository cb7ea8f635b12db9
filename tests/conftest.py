"""Shared fixtures. pytest-trio runs every ``async def`` test in its own trio run
(``trio_mode = true`` in pyproject.toml).

``--http1-parser h11|llhttp`` serves every server the tests start whose configuration leaves
``http1_parser`` at ``"auto"`` with that HTTP/1.1 parser, so the whole suite runs on either
path (``nox -s tests`` runs it on both). Without the option, ``"auto"`` chooses as it does for
users: llhttp when the speedups extra is installed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from trioframe._protocol import http1_parsers
from trioframe._protocol.http1_base import BaseHTTP1Adapter
from trioframe._server import state


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--http1-parser",
        choices=["h11", "llhttp"],
        help='serve HTTP/1.1 with this parser wherever the config says "auto"',
    )


def pytest_report_header(config: pytest.Config) -> str:
    forced = config.getoption("--http1-parser")
    chosen = forced or http1_parsers.adapter_class("auto").__name__
    return f"HTTP/1.1 parser for http1_parser='auto': {chosen}"


@pytest.fixture(autouse=True, scope="session")
def _http1_parser(request: pytest.FixtureRequest) -> Iterator[None]:
    forced = request.config.getoption("--http1-parser")
    if forced is None:
        yield
        return

    def adapter_class(parser: str) -> type[BaseHTTP1Adapter]:
        return http1_parsers.adapter_class(forced if parser == "auto" else parser)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "adapter_class", adapter_class)
        yield
