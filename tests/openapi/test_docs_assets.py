"""The shipped Swagger UI and Redoc files match the manifest that
``scripts/refresh_docs_assets.py`` wrote, and its ``--check`` says so (no network)."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys
from types import ModuleType

import pytest

SCRIPT = pathlib.Path(__file__).parents[2] / "scripts" / "refresh_docs_assets.py"


def test_the_check_passes_on_the_shipped_files() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "docs assets: ok\n"


@pytest.fixture
def script(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The script, loaded as a module, pointed at a copy of the shipped assets."""
    spec = importlib.util.spec_from_file_location("refresh_docs_assets", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    copy = tmp_path / "assets"
    shutil.copytree(module.ASSETS, copy)
    monkeypatch.setattr(module, "ASSETS", copy)
    monkeypatch.setattr(module, "MANIFEST", copy / "manifest.json")
    return module


def test_the_check_names_a_changed_or_missing_file(script: ModuleType) -> None:
    with (script.ASSETS / "swagger-ui.css").open("a") as css:
        css.write("/* edited */")
    (script.ASSETS / "redoc.LICENSE").unlink()
    problems = script.check()
    assert len(problems) == 2
    assert problems[0] == "redoc.LICENSE: missing"
    assert problems[1].startswith("swagger-ui.css: sha256 ")
    assert script.main(["--check"]) == 1


def test_the_check_names_a_pin_the_manifest_does_not_match(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(script.PACKAGES, "redoc", "2.9.9")
    assert script.check() == ["redoc: pinned 2.9.9, the manifest says 2.5.4"]
