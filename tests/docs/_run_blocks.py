"""Run the ```python blocks of every page, one page after another in this process, each in a
fresh namespace in its own temporary directory (the conventions: tests/docs/test_code_blocks.py).
Prints a JSON object: page name -> ``null``, or where and why its first failing block failed.

A process of its own, started by the test: the blocks change process-wide state (logging,
OpenTelemetry's global providers) that the rest of the suite must not see."""

from __future__ import annotations

import ast
import json
import os
import sys
import tempfile
from typing import Any

import trio

from trioframe import Server

from ._pages import FRAGMENT, PAGES, Block, blocks, name_of


def compiled(block: Block) -> Any:
    """The block's code object (a fragment may ``await`` at the top level)."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if block.marker == FRAGMENT else 0
    return compile(block.code, block.where, "exec", flags=flags, dont_inherit=True)


def run_page(page_blocks: list[Block]) -> str | None:
    """Run the blocks in order in one namespace; the first failure, or ``None``."""
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        os.mkdir("templates")
        namespace: dict[str, Any] = {
            "__name__": f"docs_{page_blocks[0].page.stem}",
            "__file__": os.path.join(directory, "app.py"),
        }
        for block in page_blocks:
            try:
                code = compiled(block)
                if not block.marker:
                    exec(code, namespace)
            except BaseException as exc:
                return f"{block.where}: {type(exc).__name__}: {exc}"
    return None


def main() -> None:
    Server.run = lambda *args, **kwargs: None  # type: ignore[method-assign]
    trio.run = lambda *args, **kwargs: None
    results = {name_of(page): run_page(blocks(page)) for page in PAGES if blocks(page)}
    sys.stdout.flush()
    print("\n" + json.dumps(results))


if __name__ == "__main__":
    main()
