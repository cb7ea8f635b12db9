"""Task runner: ``nox`` runs tests, lint, typing and docs (the site, built strictly into
docs/_build/html); ``nox -s fuzz`` runs the fuzz targets at length; ``nox -s bench`` runs the
benchmark; ``nox -s instructions`` counts the HTTP servers' instructions per request under
callgrind (``-- streams``: HTTP/2 and WebSocket); ``nox -s autobahn`` runs the Autobahn
WebSocket conformance suite (kosoku); ``nox -s h2load`` loads an HTTP/2 example app with
h2load."""

from __future__ import annotations

import os
import pathlib

import nox

nox.options.sessions = ["tests", "lint", "typing", "docs"]
nox.options.reuse_existing_virtualenvs = True

#: The documentation toolchain, pinned in docs/requirements.txt.
DOCS_DEPS = [
    line.split("#")[0].strip()
    for line in pathlib.Path(__file__).with_name("docs").joinpath("requirements.txt").open()
    if line.split("#")[0].strip()
]
TEST_DEPS = [
    "pytest>=8",
    "pytest-trio>=0.8",
    "httpx>=0.27",
    "trio-websocket>=0.11",
    "websockets>=15",
    "hypothesis>=6.100",
    "pydantic>=2",
    "jsonschema>=4.18",  # checks the JSON Schemas of tests/openapi against the converters
    "playwright>=1.40",  # drives Debian's chromium in tests/examples/test_site_browser.py
    "openapi-spec-validator>=0.7",  # every OpenAPI document the tests build is validated
    "schemathesis>=4",  # tests/openapi/test_schemathesis.py: example apps against their document
    "opentelemetry-sdk>=1.27",  # tests/middleware/test_telemetry.py: in-memory exporters
    "opentelemetry-exporter-otlp-proto-http>=1.27",  # tests/middleware/test_telemetry_otlp.py
    *DOCS_DEPS,  # tests/docs builds the documentation site and browses it in Chromium
    "mypy>=1.11",  # tests/docs/test_code_blocks.py type-checks the docs' python blocks
]
LINT_DEPS = ["ruff>=0.6"]
TYPING_DEPS = [*TEST_DEPS]
AUTOBAHN_DEPS = ["kosoku>=0.1"]
BENCH_SCRIPTS = [
    "run",
    "websocket",
    "http2",
    "middleware",
    "extract",
    "multipart_memory",
    "memory",
    "files",
    "workers",
]
#: How many times its default example count each fuzz target runs under ``nox -s fuzz``.
FUZZ_SCALE = "8"


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite (unit, in-memory, loopback sockets, examples), twice: HTTP/1.1 on llhttp
    (the speedups extra is installed, so ``http1_parser="auto"`` chooses it), then on h11 (the
    path without the extra). With arguments, one run of pytest with them."""
    session.install("-e", ".[all]", *TEST_DEPS)
    if session.posargs:
        session.run("pytest", *session.posargs)
        return
    session.run("pytest", "--http1-parser=llhttp")
    session.run("pytest", "--http1-parser=h11")


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
def docs(session: nox.Session) -> None:
    """The documentation site into docs/_build/html, strictly: every warning is an error
    (``-W --keep-going``), every cross-reference must resolve (``-n``), and every public name
    needs a docstring and a place in docs/reference/. Open docs/_build/html/index.html.
    Arguments go to sphinx-build (e.g. ``-E`` to rebuild from scratch)."""
    session.install("-e", ".[all]", *DOCS_DEPS)
    session.run(
        "sphinx-build",
        *("-b", "html", "-W", "--keep-going", "-n"),
        *session.posargs,
        "docs",
        "docs/_build/html",
    )


@nox.session
def fuzz(session: nox.Session) -> None:
    """Every test under tests/fuzz/ with ``TRIOFRAME_FUZZ_SCALE`` (8 unless already set in the
    environment): a few minutes. Not in the default sessions, which run each target briefly.

    ``TRIOFRAME_FUZZ_SCALE=50 nox -s fuzz`` runs longer; posargs go to pytest."""
    session.install("-e", ".[all]", *TEST_DEPS)
    scale = os.environ.get("TRIOFRAME_FUZZ_SCALE", FUZZ_SCALE)
    session.run("pytest", "tests/fuzz", *session.posargs, env={"TRIOFRAME_FUZZ_SCALE": scale})


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark against a bare trio+h11 loop and Starlette peers (needs wrk).

    ``nox -s bench -- websocket --duration 5`` runs ``bench/websocket.py`` (or another script
    of bench/ named first, e.g. ``http2``, which needs h2load, or ``memory``, the RSS per idle
    connection) instead of ``bench/run.py``."""
    session.install("-e", ".[websocket,http2,speedups]", "-r", "bench/requirements.txt")
    script, args = "run", list(session.posargs)
    if args and args[0] in BENCH_SCRIPTS:
        script = args.pop(0)
    session.run("python", f"bench/{script}.py", *args)


@nox.session
def h2load(session: nox.Session) -> None:
    """h2load against examples/rest_api.py served over HTTP/2: thousands of requests over many
    concurrent streams, failing unless every one is 2xx (needs h2load: nghttp2-client).

    Not in the default sessions. Arguments go to ``bench/h2load_check.py``."""
    session.install("-e", ".[http2]")
    session.run("python", "bench/h2load_check.py", *session.posargs)


@nox.session
def instructions(session: nox.Session) -> None:
    """Instructions per request of each HTTP server under valgrind's callgrind (needs valgrind).

    Not in the default sessions: a full run takes several minutes. Arguments go to
    ``bench/instructions.py``, e.g. ``nox -s instructions -- --only trioframe,bare``;
    ``nox -s instructions -- streams [ARGS]`` runs ``bench/instructions_streams.py`` instead:
    trioframe's instructions per HTTP/2 request and per WebSocket message."""
    session.install("-e", ".[http2,websocket,speedups]", "-r", "bench/requirements.txt")
    script, args = "instructions", list(session.posargs)
    if args[:1] == ["streams"]:
        script = "instructions_streams"
        args.pop(0)
    session.run("python", f"bench/{script}.py", *args)


@nox.session
def autobahn(session: nox.Session) -> None:
    """Autobahn WebSocket conformance (kosoku): sections 1-7, 9, 10 required; 12, 13 reported.

    Not in the default sessions: about 20 s for the required sections, then about 10 min for
    12 and 13 (permessage-deflate), which ``nox -s autobahn -- --no-compression`` skips."""
    session.install("-e", ".[all]", *AUTOBAHN_DEPS)
    session.run("python", "bench/autobahn/conformance.py", *session.posargs)
