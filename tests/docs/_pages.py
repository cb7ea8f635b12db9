"""The documentation pages and their ```python blocks, for the tests of this package."""

from __future__ import annotations

import pathlib
import re
import textwrap

import attrs

__all__ = ["FRAGMENT", "NO_RUN", "PAGES", "PROJECT_FILE", "ROOT", "Block", "blocks", "name_of"]

ROOT = pathlib.Path(__file__).parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted(page for page in (ROOT / "docs").rglob("*.md") if "_build" not in page.parts),
]

#: The marker, on the line before a block, of an excerpt: compiled, never run nor type-checked.
FRAGMENT = "<!-- fragment -->"
#: The marker of a block that needs the outside world (files, services): type-checked only.
NO_RUN = "<!-- no-run -->"
#: What a block whose first line names a file (``# app.py``, ``# tests/test_app.py, a note``)
#: is: a file of a project the page builds. It is compiled here; the page's own test runs and
#: type-checks the project (tests/pytest_plugin/test_docs.py for docs/testing.md).
PROJECT_FILE = "project file"
_NAMES_A_FILE = re.compile(r"# [\w./-]+\.py(,.*)?")

# A fenced block, indented or not (inside a list item); it ends at a fence as indented.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@attrs.frozen
class Block:
    """One ```python block: its page, the line of its first line of code, its code
    (dedented) and the marker before it (``""`` without one)."""

    page: pathlib.Path
    line: int
    code: str
    marker: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: pathlib.Path) -> list[Block]:
    """Every ```python block of ``page``, in order."""
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        if match["info"].strip() != "python":
            continue
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1].strip()
        marker = before if before in (FRAGMENT, NO_RUN) else ""
        line = text.count("\n", 0, match.start()) + 2
        code = textwrap.dedent(match["body"])
        if _NAMES_A_FILE.fullmatch(code.split("\n", 1)[0]):
            marker = PROJECT_FILE
        found.append(Block(page, line, code, marker))
    return found


def name_of(page: pathlib.Path) -> str:
    """The page as the tests name it: its path from the repository's root."""
    return page.relative_to(ROOT).as_posix()
