"""The code blocks of docs/testing.md, and pytest run in a directory of its own.

A block whose first line is ``# PATH`` (``# app.py``, ``# tests/test_app.py``) is a file of
the documented project; ``# PATH, NOTE`` is a variant of that file (another ``conftest.py``,
a ``pyproject.toml`` that turns something off). Every other Python block is a test module of
its own.
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

import attrs

import trioframe

CHECKOUT = pathlib.Path(trioframe.__file__).parents[1]
DOC = CHECKOUT / "docs" / "testing.md"

FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>\w*)\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S
)
TAG = re.compile(r"# (?P<path>[\w./]+\.(?:py|toml))(?:, (?P<note>.+))?")


@attrs.frozen
class Block:
    lang: str
    code: str
    line: int  # in the document, for messages
    path: str | None = None  # a file of the documented project
    note: str | None = None  # set for a variant of that file


def blocks(text: str | None = None) -> list[Block]:
    text = DOC.read_text() if text is None else text
    found = []
    for match in FENCE.finditer(text):
        indent = len(match["indent"])
        code = textwrap.dedent("".join(line[indent:] for line in match["body"].splitlines(True)))
        first = code.partition("\n")[0]
        tag = TAG.fullmatch(first)
        line = text.count("\n", 0, match.start()) + 1
        if tag is None:
            found.append(Block(match["lang"], code, line))
        else:
            found.append(Block(match["lang"], code, line, tag["path"], tag["note"]))
    return found


def project_files() -> dict[str, str]:
    """The documented project: its files by path, as the page shows them."""
    return {b.path: b.code for b in blocks() if b.path is not None and b.note is None}


def variant(path: str, note_start: str) -> str:
    (code,) = [b.code for b in blocks() if b.path == path and (b.note or "").startswith(note_start)]
    return code


def write(directory: pathlib.Path, files: dict[str, str]) -> None:
    for path, code in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code)


def plugin_args() -> list[str]:
    """``-p trioframe.pytest_plugin`` unless this environment's trioframe registers it through
    its entry point already (an install from an older checkout does not)."""
    registered = any(
        ep.value == "trioframe.pytest_plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    )
    return [] if registered else ["-p", "trioframe.pytest_plugin"]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what steers pytest or Python's imports."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST_") and key not in {"PYTHONPATH", "VIRTUAL_ENV"}
    }
    env.update(extra)
    return env


def run_pytest(
    directory: pathlib.Path, *args: str, python: str = sys.executable, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``directory`` with this checkout's trioframe (and its tests
    package) importable and this checkout's plugin loaded."""
    return subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", *plugin_args(), *args],
        cwd=directory,
        env=clean_env(PYTHONPATH=str(CHECKOUT)),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@attrs.define
class RecordingSession:
    """Stands in for ``nox.Session``: records what a session installs and runs."""

    posargs: list[str] = attrs.Factory(list)
    installs: list[tuple[str, ...]] = attrs.Factory(list)
    runs: list[tuple[str, ...]] = attrs.Factory(list)

    def install(self, *args: str) -> None:
        self.installs.append(args)

    def run(self, *args: str) -> None:
        self.runs.append(args)


def noxfile_sessions(code: str) -> dict[str, RecordingSession]:
    """Each session of a noxfile, called with a recording session (nox is not imported)."""
    sessions: dict[str, Callable[[Any], None]] = {}
    nox = types.ModuleType("nox")
    nox.Session = RecordingSession  # type: ignore[attr-defined]
    nox.session = lambda function: sessions.setdefault(function.__name__, function)  # type: ignore[attr-defined]
    saved = sys.modules.get("nox")
    sys.modules["nox"] = nox
    try:
        exec(compile(code, "noxfile.py", "exec"), {"__name__": "noxfile"})
    finally:
        if saved is None:
            del sys.modules["nox"]
        else:
            sys.modules["nox"] = saved
    recorded = {}
    for name, function in sessions.items():
        recorded[name] = RecordingSession()
        function(recorded[name])
    return recorded


def outcome(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
