"""``python -m trioframe`` and the ``trioframe`` script: see ``trioframe._process.cli`` and
docs/cli.md."""

from __future__ import annotations

from ._process.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
