"""The examples' log lines: the server's own lines already say "trioframe", so a format that
adds the logger's name would print "trioframe trioframe serving on ..."."""

from __future__ import annotations

import ast
import logging
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"


def _formats(path: pathlib.Path) -> list[str]:
    """The ``format=`` of every ``logging.basicConfig(...)`` in ``path`` (logging's default
    when it has none)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "logging.basicConfig":
            given = [k.value for k in node.keywords if k.arg == "format"]
            found.append(ast.literal_eval(given[0]) if given else logging.BASIC_FORMAT)
    return found


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda path: path.name)
def test_the_serving_line_names_trioframe_once(path: pathlib.Path) -> None:
    record = logging.LogRecord(
        "trioframe", logging.INFO, __file__, 1, "trioframe serving on %s", ("http://x",), None
    )
    for line_format in _formats(path):
        line = logging.Formatter(line_format).format(record)
        assert line.count("trioframe") == 1, line
