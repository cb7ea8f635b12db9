"""The command line: ``trioframe run MODULE:ATTR`` (also ``python -m trioframe``).

``args`` is the parser, ``config`` turns options into a ``ServerConfig``, ``reload`` is the
development reloader, ``logs`` the logging setup, and ``entry`` holds ``main()``, which ties
them together with the rest of the processes ring (``load``, ``run``, ``workers``).
docs/cli.md describes every option and exit status.
"""

from __future__ import annotations

from .entry import main

__all__ = ["main"]
