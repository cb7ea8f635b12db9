"""Task runner: ``nox`` runs tests, lint and typing; ``nox -s bench`` runs the benchmark."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typing"]
nox.options.reuse_existing_virtualenvs = True

TEST_DEPS = ["pytest>=8", "pytest-trio>=0.8", "httpx>=0.27"]
LINT_DEPS = ["ruff>=0.6"]
TYPING_DEPS = ["mypy>=1.11", *TEST_DEPS]


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite (unit, in-memory, loopback sockets, examples)."""
    session.install("-e", ".[all]", *TEST_DEPS)
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff format --check and ruff check (ASYNC rules included, see pyproject.toml)."""
    session.install(*LINT_DEPS)
    session.run("ruff", "format", "--check", ".")
    session.run("ruff", "check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    """mypy --strict on the package, plus the type tests."""
    session.install("-e", ".[all]", *TYPING_DEPS)
    session.run("mypy", "--strict", "trioframe", "tests/typing")


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark against a bare trio+h11 loop and Starlette peers (needs wrk)."""
    session.install("-e", ".", "-r", "bench/requirements.txt")
    session.run("python", "bench/run.py", *session.posargs)
