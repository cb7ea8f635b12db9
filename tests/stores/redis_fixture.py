"""A real ``redis-server`` for a test: started on a free loopback port with no persistence
(``--save "" --appendonly no``), its files in a temporary directory, and stopped when the test
ends. ``RedisServer.stop()`` and ``start()`` kill and bring it back on the same port, for
the tests of what happens while Redis is down."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` on ``127.0.0.1:port``; ``url`` is what ``RedisStore`` takes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: trio.Process | None = None

    async def start(self) -> None:
        """Start it (again) and return once it answers PING."""
        self._process = await trio.lowlevel.open_process(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with trio.fail_after(10):
            # Another process: no event to wait for, so poll.
            while not await trio.to_thread.run_sync(self._answers):  # noqa: ASYNC110
                await trio.sleep(0.02)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                probe.sendall(b"PING\r\n")
                return probe.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    async def stop(self) -> None:
        """Kill it (SIGKILL: connections break as in a crash) and wait until it is gone."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.kill()
            with trio.move_on_after(10):
                await process.wait()


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[RedisServer]:
    """A running ``redis-server``; skips the test when it is not installed (``.ci/run``
    installs Debian's redis-server)."""
    if not await trio.Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    server = RedisServer(tmp_path)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
