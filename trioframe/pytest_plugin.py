"""trioframe's pytest plugin, registered through the ``pytest11`` entry point: pytest loads it
in every environment where trioframe is installed.

- ``client``: an async fixture, ``async with TestClient(router) as client`` around the test,
  for the ``router`` fixture that the project defines (in its ``conftest.py``).
- Trio mode without configuration: every ``async def`` test that no other plugin claims runs
  under trio through pytest-trio, as with pytest-trio's ``trio_mode = true``. The plugin
  leaves a test alone when it carries a ``trio``, ``anyio`` or ``asyncio`` marker or uses
  anyio's ``anyio_backend`` fixture, and does nothing at all when pytest-trio is missing or
  already in trio mode, when pytest-asyncio runs in auto mode, or when the ini option
  ``trioframe_trio_mode`` is false.

Importing this module must not need httpx (the ``testing`` extra may be missing, and pytest
imports the plugin anyway): ``trioframe.testing`` is imported inside the fixture.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ._routing.router import Router
    from .testing import TestHttpClient

__all__ = ["client", "router"]

#: Markers by which a test says which async plugin runs it.
OTHER_RUNNERS = ("trio", "anyio", "asyncio")

NO_ROUTER = (
    "the `client` fixture tests the router of a `router` fixture, which this project does not "
    "define; add one to conftest.py:\n\n"
    "    @pytest.fixture\n"
    "    def router() -> Router:\n"
    "        return app.router\n"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "trioframe_trio_mode",
        "run async tests that no other plugin claims under trio (pytest-trio); default true",
        type="bool",
        default=True,
    )


@pytest.fixture
def router() -> Router:
    """Stands in for the project's own ``router`` fixture, which overrides it."""
    pytest.fail(NO_ROUTER, pytrace=False)


@pytest.fixture
async def client(router: Router) -> AsyncIterator[TestHttpClient]:
    """``async with TestClient(router) as client``: an ``httpx.AsyncClient`` wired to the
    ``router`` fixture's app in memory. Define your own ``client`` fixture for a
    ``ServerConfig``, ``tls=True`` or ``http2=True``."""
    from .testing import TestClient

    async with TestClient(router) as test_client:
        yield test_client


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not trio_mode_is_ours(config):
        return
    for item in items:
        if isinstance(item, pytest.Function) and unclaimed_async_test(item):
            item.add_marker(pytest.mark.trio)


def trio_mode_is_ours(config: pytest.Config) -> bool:
    """Whether this plugin marks async tests for pytest-trio in this run."""
    if not config.pluginmanager.hasplugin("trio") or not config.getini("trioframe_trio_mode"):
        return False
    if config.getini("trio_mode"):
        return False  # pytest-trio marks them itself
    return not _asyncio_auto_mode(config)


def _asyncio_auto_mode(config: pytest.Config) -> bool:
    if not config.pluginmanager.hasplugin("asyncio"):
        return False
    mode: Any = config.getoption("asyncio_mode", None)
    if mode is None:
        try:
            mode = config.getini("asyncio_mode")
        except ValueError:  # an unknown pytest-asyncio without the option
            return False
    return str(mode) == "auto"


def unclaimed_async_test(item: pytest.Function) -> bool:
    function = item.obj
    hypothesis = getattr(function, "hypothesis", None)
    if hypothesis is not None:
        function = hypothesis.inner_test
    if not inspect.iscoroutinefunction(function):
        return False
    if any(item.get_closest_marker(name) is not None for name in OTHER_RUNNERS):
        return False
    return "anyio_backend" not in item.fixturenames
