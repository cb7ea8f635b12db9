"""``nox`` runs the tests, the linter and the type checker, each in a virtualenv of its own."""

import nox

nox.options.sessions = ["tests", "lint", "typing"]
nox.options.reuse_existing_virtualenvs = True

TEST_DEPS = ["trioframe[testing]", "pytest", "pytest-trio"]


@nox.session
def tests(session: nox.Session) -> None:
    session.install(*TEST_DEPS)
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    session.install(*TEST_DEPS, "mypy", "nox")
    session.run("mypy", "--strict", ".")
