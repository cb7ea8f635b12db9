"""trioframe served from other checkouts: the ``--trioframe [LABEL=]DIR`` option that
``run.py`` and ``instructions.py`` share, and the probe that checks where trioframe came from.

A checkout is a directory holding a ``trioframe`` package (another git worktree, say). Its
server runs with that directory first on ``PYTHONPATH`` and this checkout's
``apps/trioframe_app.py``; before it starts, a probe imports trioframe the same way and must
find it under that directory, so a comparison never measures the same code twice by mistake.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # this checkout
PY = sys.executable

#: The probe of a trioframe server: imports what the benchmark apps use, prints where from.
TRIOFRAME_PROBE = (
    "import trioframe\nfrom trioframe import Request, Response, Router, Server\n"
    "print(trioframe.__path__[0])"
)


@dataclass(frozen=True)
class Checkout:
    """trioframe from ``directory``, named ``label`` in the tables."""

    label: str
    directory: Path


def add_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--trioframe [LABEL=]DIR`` (also spelled ``--trioframe-path``), repeatable."""
    parser.add_argument(
        "--trioframe",
        "--trioframe-path",
        action="append",
        default=[],
        metavar="[LABEL=]DIR",
        help="serve trioframe from DIR (first on PYTHONPATH); repeat to compare checkouts",
    )


def parse_checkouts(values: list[str]) -> list[Checkout]:
    """The ``--trioframe`` values as checkouts, in order; this checkout, labelled
    ``trioframe``, when there are none. A value without ``LABEL=`` is labelled with its
    directory's name. Raises ValueError when two labels are the same."""
    if not values:
        return [Checkout("trioframe", ROOT)]
    checkouts = []
    for value in values:
        label, sep, directory = value.rpartition("=")
        path = Path(directory).expanduser()
        checkouts.append(Checkout(label if sep else path.resolve().name, path))
    labels = [checkout.label for checkout in checkouts]
    if len(set(labels)) != len(labels):
        raise ValueError(f"--trioframe labels must differ: {labels}; name them LABEL=DIR")
    return checkouts


def environment(checkout: Checkout | None = None, **extra: str) -> dict[str, str]:
    """The environment of a server, its probe and its load generator: the checkout's directory
    (this checkout's without one) first on ``PYTHONPATH``, then ``extra``."""
    first = str(checkout.directory if checkout else ROOT)
    path = os.pathsep.join(p for p in (first, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def probe(code: str, checkout: Checkout | None = None) -> tuple[bool, str]:
    """Run a server's probe ``code`` in a subprocess, in the server's environment.

    Returns (False, why) when it fails: the server cannot run here. Otherwise (True, its last
    line of output), except for a checkout: then that last line must be the directory
    trioframe was imported from (``TRIOFRAME_PROBE`` prints it), which must lie under the
    checkout's directory, and the description names it and the checkout's commit."""
    proc = subprocess.run(
        [PY, "-P", "-c", code],  # -P: not the working directory first, PYTHONPATH is
        cwd=ROOT,
        env=environment(checkout),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = (proc.stdout if proc.returncode == 0 else proc.stderr).strip().splitlines()
    detail = lines[-1] if lines else f"probe exited {proc.returncode}"
    if proc.returncode != 0 or checkout is None:
        return proc.returncode == 0, detail
    where = Path(detail).resolve()
    if not where.is_relative_to(checkout.directory.resolve()):
        return False, f"trioframe imported from {where}, not from {checkout.directory}"
    return True, f"trioframe from {where} ({git_commit(checkout.directory)})"


def git_commit(directory: Path) -> str:
    """The directory's git commit, with '+ changes' when its trioframe/ has uncommitted
    changes."""
    git = ["git", "-C", str(directory)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "not a git checkout"
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "trioframe"], capture_output=True)
    return f"commit {head.stdout.strip()}" + (" + changes" if dirty.stdout.strip() else "")
