"""What the plugin does to a project's run, and what it leaves alone."""

from __future__ import annotations

import pathlib
import types
from typing import Any

import pytest

from trioframe import pytest_plugin

from ._docs import outcome, run_pytest

TRIO_TEST = """
import sniffio


async def test_runs_under_trio():
    assert sniffio.current_async_library() == "trio"
"""


def run(tmp_path: pathlib.Path, files: dict[str, str], *args: str) -> str:
    for name, code in files.items():
        (tmp_path / name).write_text(code)
    result = run_pytest(tmp_path, "-v", *args)
    assert result.returncode == 0, outcome(result)
    return result.stdout


def test_async_tests_run_under_trio_without_configuration(tmp_path: pathlib.Path) -> None:
    assert "1 passed" in run(tmp_path, {"test_it.py": TRIO_TEST})


def test_pytest_trios_own_trio_mode_is_left_to_it(tmp_path: pathlib.Path) -> None:
    ini = "[pytest]\ntrio_mode = true\n"
    assert "1 passed" in run(tmp_path, {"pytest.ini": ini, "test_it.py": TRIO_TEST})


def test_anyio_tests_are_left_to_anyio(tmp_path: pathlib.Path) -> None:
    anyio_test = """
import pytest
import sniffio

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_runs_under_asyncio():
    assert sniffio.current_async_library() == "asyncio"
"""
    stdout = run(tmp_path, {"test_anyio.py": anyio_test, "test_trio.py": TRIO_TEST})
    assert "2 passed" in stdout


def test_explicitly_marked_trio_tests_keep_their_marker(tmp_path: pathlib.Path) -> None:
    marked = "import pytest\n\n\n@pytest.mark.trio\n" + TRIO_TEST.lstrip().replace(
        "import sniffio\n\n\n", ""
    )
    assert "1 passed" in run(tmp_path, {"test_it.py": "import sniffio\n" + marked})


def test_a_client_without_a_router_fixture_says_what_to_add(tmp_path: pathlib.Path) -> None:
    (tmp_path / "test_it.py").write_text("async def test_it(client):\n    pass\n")
    result = run_pytest(tmp_path)
    assert result.returncode == 1, outcome(result)
    assert "does not define; add one to conftest.py" in result.stdout
    assert "def router() -> Router:" in result.stdout


def fake_config(asyncio_mode: str) -> Any:
    """A config where pytest-trio and pytest-asyncio (in ``asyncio_mode``) are loaded."""
    ini = {"trioframe_trio_mode": True, "trio_mode": False, "asyncio_mode": asyncio_mode}
    return types.SimpleNamespace(
        pluginmanager=types.SimpleNamespace(hasplugin=lambda name: name in {"trio", "asyncio"}),
        getini=ini.__getitem__,
        getoption=lambda name, default=None: default,
    )


def test_pytest_asyncio_auto_mode_turns_the_plugins_trio_mode_off() -> None:
    assert not pytest_plugin.trio_mode_is_ours(fake_config("auto"))
    assert pytest_plugin.trio_mode_is_ours(fake_config("strict"))


def test_our_own_suite_sets_trio_mode(pytestconfig: pytest.Config) -> None:
    # so the plugin, when loaded here, marks nothing: pytest-trio does
    assert pytestconfig.getini("trio_mode") is True
    if pytestconfig.pluginmanager.is_registered(pytest_plugin):  # once installed from here
        assert not pytest_plugin.trio_mode_is_ours(pytestconfig)
