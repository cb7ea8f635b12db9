"""``python -m trioframe`` and the ``trioframe`` script: see ``trioframe._cli`` and docs/cli.md."""

from __future__ import annotations

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
