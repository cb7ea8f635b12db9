"""Every ```python block of README.md and docs/ (every page of the site) runs and type-checks.

The convention, chosen so that most blocks need no marker:

- **A page is one program.** Its blocks run in order in one fresh namespace, so a block may use
  what an earlier block of the same page defined (never what another page did). The pages run
  in a process of their own (``_run_blocks.py``), so what they set up for the whole process
  (logging, OpenTelemetry's providers) stays out of the rest of the suite. The namespace's
  ``__name__`` is not ``"__main__"`` and ``Server.run`` and ``trio.run`` do nothing: no server
  is started, by an ``if __name__ == "__main__":`` block or otherwise. The blocks run in a
  temporary directory, where ``__file__`` is ``app.py`` beside an empty ``templates/``, with
  ``SESSION_KEY`` (a valid key) and ``REDIS_URL`` in the environment.
- **Then the page is type-checked**: its blocks, concatenated, with ``mypy --strict``, one mypy
  run over every page. Redefining a name (two blocks each with their own ``router``) is
  allowed, and so is ``...`` as the body of a function (``async def get_user(...) -> Response:
  ...``, a handler whose body does not matter to the example).
- ``<!-- no-run -->`` on the line before a block: it needs the outside world (a certificate
  file, a directory, a running Redis server, the reader's application, written ``myapp``). It
  is type-checked with its page but not run.
- A block whose first line names a file (``# app.py``) is a file of a project the page
  builds: compiled here, run and type-checked as a project by the page's own test (for
  docs/testing.md, tests/pytest_plugin/test_docs.py).
- ``<!-- fragment -->`` on the line before a block: an excerpt, not a program (statements out of
  a test, say). It is only compiled (top-level ``await`` allowed); use it as little as possible.

A block that uses a name it neither defines nor imports, nor got from an earlier block of its
page, fails here: write the import, or a one-line stand-in (``async def get_item(item_id:
Path[int]) -> Response: ...``).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import secrets
import subprocess
import sys

import pytest

from ._pages import FRAGMENT, PAGES, PROJECT_FILE, ROOT, Block, blocks, name_of
from ._run_blocks import compiled

WITH_CODE = [page for page in PAGES if blocks(page)]
REDIS_URL = "redis://localhost:6379/0"  # never connected to: the blocks only build stores

_FUTURE = re.compile(r"^from __future__ import [^\n]*\n", re.MULTILINE)


@pytest.fixture(scope="module")
def run_results() -> dict[str, str | None]:
    """Each page's first failing block, ``None`` when all ran: ``_run_blocks`` runs them in a
    process of its own (the blocks change process-wide state: logging, OpenTelemetry)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.docs._run_blocks"],
        cwd=ROOT,
        env={**os.environ, "SESSION_KEY": secrets.token_urlsafe(32), "REDIS_URL": REDIS_URL},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, str | None] = json.loads(done.stdout.splitlines()[-1])
    return results


@pytest.mark.parametrize("page", WITH_CODE, ids=name_of)
def test_the_blocks_of_a_page_run(page: pathlib.Path, run_results: dict[str, str | None]) -> None:
    for block in blocks(page):
        compiled(block)  # a syntax error fails here, marked or not
    if run_results[name_of(page)] is not None:
        pytest.fail(run_results[name_of(page)])


def _module(page: pathlib.Path) -> tuple[str, list[tuple[int, Block]]]:
    """The page's blocks as one module (fragments left out), and where each block starts."""
    lines: list[str] = []
    starts: list[tuple[int, Block]] = []
    for block in blocks(page):
        if block.marker in (FRAGMENT, PROJECT_FILE):
            continue
        starts.append((len(lines) + 1, block))
        lines.extend(_FUTURE.sub("\n", block.code).splitlines())  # keeps the line numbers
        lines.append("")
    return "\n".join(lines) + "\n", starts


def _source_line(starts: list[tuple[int, Block]], line: int) -> str:
    """``docs/page.md:LINE`` for a line of the page's module."""
    start, block = max((s for s in starts if s[0] <= line), key=lambda s: s[0])
    return f"{block.page.relative_to(ROOT)}:{block.line + line - start}"


MYPY_CONFIG = """\
[mypy]
strict = True
python_version = 3.11
allow_redefinition = True
disable_error_code = no-redef, empty-body

[mypy-myapp]
ignore_missing_imports = True
"""


def test_the_blocks_type_check(tmp_path: pathlib.Path) -> None:
    # mypy is a test dependency: without it the run below fails, it is never skipped
    maps = {}
    for page in WITH_CODE:
        name = "docs_" + re.sub(r"\W", "_", name_of(page).removesuffix(".md").lower())
        source, maps[name] = _module(page)
        (tmp_path / f"{name}.py").write_text(source)
    (tmp_path / "mypy.ini").write_text(MYPY_CONFIG)
    cache = str(ROOT / ".mypy_cache" / "docs")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", cache, "."],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = []
    for line in done.stdout.splitlines():
        found = re.match(r"(docs_\w+)\.py:(\d+): (error|note): (.*)", line)
        if found and found[3] == "error":
            errors.append(f"{_source_line(maps[found[1]], int(found[2]))}: {found[4]}")
        elif not found and not line.startswith(("Found ", "Success")):
            errors.append(line)
    assert not errors, "\n".join(errors)
    assert done.returncode in (0, 1), done.stdout + done.stderr
