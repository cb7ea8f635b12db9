"""``python -m trioframe run examples.hello:router --http2``: h2c with prior knowledge on
cleartext, h2 by ALPN with ``--self-signed``; both still speak HTTP/1.1; SIGTERM exits 0."""

from __future__ import annotations

import json
import pathlib
import re
import signal
import subprocess
import sys

import pytest
import trio

from tests.cli._cli import free_port

from ._support import CurlResult, curl

pytestmark = pytest.mark.loopback

ROOT = pathlib.Path(__file__).parents[2]


async def _read_until(stream: trio.abc.ReceiveStream, pattern: bytes, seen: bytearray) -> bytes:
    """Read the process's output into ``seen`` until ``pattern`` (a regex) matches."""
    while (found := re.search(pattern, seen)) is None:
        chunk = await stream.receive_some(4096)
        assert chunk, f"output ended before {pattern!r}: {bytes(seen)!r}"
        seen += chunk
    return found[0]


async def _run_cli(flags: list[str], scheme: str) -> list[CurlResult]:
    """Start the CLI with ``flags``; once it serves, GET /users/1 over HTTP/2 and over
    HTTP/1.1 with curl; stop it with SIGTERM (it must exit 0). The two curl results."""
    port = free_port()
    command = [sys.executable, "-m", "trioframe", "run", "examples.hello:router"]
    process = await trio.lowlevel.open_process(
        [*command, "--port", str(port), *flags],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    seen = bytearray()
    try:
        with trio.fail_after(20):
            trust: list[str] = []
            if scheme == "https":
                line = await _read_until(process.stdout, rb"--cacert \S+\.pem", seen)
                trust = ["--cacert", line.split()[-1].decode()]
            await _read_until(process.stdout, rb"serving on " + scheme.encode() + rb"://", seen)
            url = f"{scheme}://localhost:{port}/users/1"
            h2 = "--http2" if scheme == "https" else "--http2-prior-knowledge"
            results = [await curl(h2, *trust, url), await curl("--http1.1", *trust, url)]
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return results


async def test_cli_http2_serves_h2c_and_http1_1() -> None:
    h2, h1 = await _run_cli(["--http2"], "http")
    assert (h2.version, h2.status) == ("HTTP/2", 200)
    assert (h1.version, h1.status) == ("HTTP/1.1", 200)
    assert json.loads(h2.body) == json.loads(h1.body) == {"id": 1, "name": "Ada"}


async def test_cli_http2_self_signed_serves_h2_by_alpn() -> None:
    h2, h1 = await _run_cli(["--http2", "--self-signed"], "https")
    assert (h2.version, h2.status) == ("HTTP/2", 200)
    assert (h1.version, h1.status) == ("HTTP/1.1", 200)
    assert json.loads(h2.body) == json.loads(h1.body) == {"id": 1, "name": "Ada"}


async def test_cli_without_http2_answers_prior_knowledge_with_http1_1() -> None:
    """Without ``--http2`` the preface is not HTTP/2's: curl with prior knowledge fails."""
    port = free_port()
    command = [sys.executable, "-m", "trioframe", "run", "examples.hello:router"]
    process = await trio.lowlevel.open_process(
        [*command, "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        with trio.fail_after(20):
            await _read_until(process.stdout, rb"serving on http://", bytearray())
            url = f"http://127.0.0.1:{port}/users/1"
            refused = await curl("--http2-prior-knowledge", url, check=False)
            plain = await curl(url)
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert refused.returncode != 0 and refused.version != "HTTP/2"
    assert (plain.version, plain.status) == ("HTTP/1.1", 200)
