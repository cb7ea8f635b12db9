"""Running ``python -m trioframe`` as a user would, for the command-line tests: to completion
(``run_cli``), or as a server that is waited for until it listens (``serving``). Every run is
bounded in time; servers bind 127.0.0.1 only."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import trio

__all__ = ["Server", "assert_one_line", "free_port", "run_cli", "serving", "write_module"]

ROOT = Path(__file__).parents[2]
SERVING = re.compile(rb"trioframe serving on https?://127\.0\.0\.1:(\d+)")


def free_port() -> int:
    """A port nothing listens on right now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def write_module(directory: Path, name: str, source: str) -> Path:
    """Write ``name.py`` (``source`` dedented) into ``directory``."""
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def _environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    environment = {
        k: v for k, v in os.environ.items() if k != "PORT" and not k.startswith("TRIOFRAME_")
    }
    return {**environment, **(extra or {})}


def run_cli(
    *arguments: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None, timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m trioframe ARGUMENTS`` to completion and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "trioframe", *arguments],
        cwd=cwd,
        env=_environment(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line(stderr: str, *words: str) -> str:
    """``stderr`` is one ``trioframe: ...`` line (no traceback) holding each of ``words``."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("trioframe: "), line
    assert "Traceback" not in line
    for word in words:
        assert word in line, (word, line)
    return line


class Server:
    """A running ``python -m trioframe`` and everything it has written on stderr so far."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.log = b""
        self.port = 0

    async def read_log_until(self, pattern: re.Pattern[bytes], start: int = 0) -> re.Match[bytes]:
        """Read stderr until ``pattern`` matches past ``start`` (the caller bounds the time)."""
        assert self.process.stderr is not None
        while (found := pattern.search(self.log, start)) is None:
            chunk = await self.process.stderr.receive_some()
            assert chunk, f"stderr ended before {pattern.pattern!r}:\n{self.log.decode()}"
            self.log += chunk
        return found

    async def finish(self) -> int:
        """Wait for the exit status, reading the rest of stderr."""
        assert self.process.stderr is not None
        async for chunk in self.process.stderr:
            self.log += chunk
        return await self.process.wait()


@asynccontextmanager
async def serving(
    *arguments: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None
) -> AsyncIterator[Server]:
    """Start ``python -m trioframe ARGUMENTS`` and yield it once its serving line is logged
    (its port in ``server.port``); kill it on the way out if it is still running."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trioframe", *arguments],
        cwd=cwd,
        env=_environment(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = Server(process)
    try:
        server.port = int((await server.read_log_until(SERVING))[1])
        yield server
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
