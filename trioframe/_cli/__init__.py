"""The command line: ``trioframe run MODULE:ATTR`` (also ``python -m trioframe``).

``args`` is the parser, ``config`` turns options into a ``ServerConfig``, ``load`` finds the
router, ``reload`` is the development reloader, ``logs`` the logging setup, and ``entry`` holds
``main()``, which ties them together. docs/cli.md describes every option and exit status.
"""

from __future__ import annotations

from .entry import main

__all__ = ["main"]
