"""The real test of docs/testing.md: in a fresh virtual environment with nothing but this
checkout installed with the ``testing`` extra, the documented project (its files taken from
the page) passes the documented noxfile's commands: ``python -m pytest``, and ``mypy
--strict`` after installing mypy as the page's typing session does.

Slow (a venv and an install from the machine's package index, usually under a minute), so
marked ``slow``; every step is bounded and the whole is at most ``BUDGET`` seconds."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

from ._docs import CHECKOUT, clean_env, noxfile_sessions, project_files, write

BUDGET = 300.0

pytestmark = pytest.mark.slow


class Venv:
    def __init__(self, root: pathlib.Path, deadline: float) -> None:
        self.root, self.deadline = root, deadline
        self.bin = root / ("Scripts" if os.name == "nt" else "bin")

    def run(self, *args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"over the budget of {BUDGET:.0f} s before {args}")
        env = clean_env(VIRTUAL_ENV=str(self.root))
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        result = subprocess.run(
            [*args], cwd=cwd, env=env, capture_output=True, text=True, timeout=remaining
        )
        assert result.returncode == 0, (
            f"{args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        )
        return result

    def install(self, *requirements: str, cwd: pathlib.Path) -> None:
        """pip install, this checkout standing in for the ``trioframe`` release."""
        local = [
            r.replace("trioframe", str(CHECKOUT), 1) if r.startswith("trioframe") else r
            for r in requirements
        ]
        self.run(str(self.bin / "python"), "-m", "pip", "install", "--quiet", *local, cwd=cwd)


def test_the_documented_project_in_a_fresh_venv(tmp_path: pathlib.Path) -> None:
    deadline = time.monotonic() + BUDGET
    files = project_files()
    project = tmp_path / "project"
    write(project, files)
    subprocess.run(
        [sys.executable, "-m", "venv", str(tmp_path / "venv")],
        check=True,
        capture_output=True,
        timeout=120,
        env=clean_env(),
    )
    venv = Venv(tmp_path / "venv", deadline)

    sessions = noxfile_sessions(files["noxfile.py"])
    for name in ("tests", "typing"):  # what `nox` would do in each session's venv
        for requirements in sessions[name].installs:
            venv.install(*requirements, cwd=project)
        for command in sessions[name].runs:
            program, *args = command
            result = venv.run(str(venv.bin / program), *args, cwd=project)
            if name == "tests":
                assert "1 passed" in result.stdout, result.stdout
                assert "plugins: trio-" in result.stdout and "trioframe-" in result.stdout
            else:
                assert "Success: no issues found in 3 source files" in result.stdout
