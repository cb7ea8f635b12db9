"""Every example app in examples/ is linked from a page of the site and has tests of its own
(a test module of tests/examples/ that loads it by name)."""

from __future__ import annotations

import pathlib
import re

import pytest

from ._pages import PAGES, ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
_LINK = re.compile(r"\]\(([^)#\s]+)")


def _linked() -> set[pathlib.Path]:
    found = set()
    for page in PAGES:
        for target in _LINK.findall(page.read_text()):
            found.add((page.parent / target).resolve())
    return found


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_every_example_is_linked_from_the_docs(example: pathlib.Path) -> None:
    assert example.resolve() in _linked(), f"no page of the docs links to examples/{example.name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_every_example_has_tests(example: pathlib.Path) -> None:
    tests = (ROOT / "tests" / "examples").glob("test_*.py")
    naming = [path for path in tests if f'"{example.name}"' in path.read_text()]
    assert naming, f"no module of tests/examples/ loads examples/{example.name}"
