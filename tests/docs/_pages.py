"""The documentation pages and their ```python blocks, for the tests of this package."""

from __future__ import annotations

import pathlib
import re
import textwrap

import attrs

__all__ = ["FRAGMENT", "NO_RUN", "PAGES", "ROOT", "Block", "blocks"]

ROOT = pathlib.Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: The marker, on the line before a block, of an excerpt: compiled, never run nor type-checked.
FRAGMENT = "<!-- fragment -->"
#: The marker of a block that needs the outside world (files, services): type-checked only.
NO_RUN = "<!-- no-run -->"

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
        found.append(Block(page, line, textwrap.dedent(match["body"]), marker))
    return found
