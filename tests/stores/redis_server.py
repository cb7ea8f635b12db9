"""A real ``redis-server`` (Debian's package) for the store tests: on a free port of
127.0.0.1, in a temporary directory, with no persistence (``--save "" --appendonly no``).
A test can stop it, kill it, start it again on the same port, and send it raw commands (say
``DEBUG SLEEP``) on a connection of its own. Tests that need it are skipped, with the reason
shown, when it is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def encode(*arguments: str | bytes) -> bytes:
    """A command in RESP, the protocol Redis speaks."""
    parts = [b"*%d\r\n" % len(arguments)]
    for argument in arguments:
        data = argument.encode() if isinstance(argument, str) else argument
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class RedisServer:
    """One ``redis-server`` process, started and stopped by the test."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.process is None
        self.process = subprocess.Popen(
            [
                *(REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
                *("--enable-debug-command", "local", "--loglevel", "warning"),
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.command_now("PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            assert self.process.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not start in 10 s"
            time.sleep(0.01)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it (``SIGKILL``: kill it, connections cut at once)."""
        if self.process is not None:
            self.process.send_signal(sig)
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def command_now(self, *arguments: str | bytes) -> bytes:
        """Send one command on a new connection and return the first chunk of the reply."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(encode(*arguments))
            return connection.recv(65536)

    async def command(self, *arguments: str | bytes) -> bytes:
        """The same without blocking the trio run (for ``DEBUG SLEEP`` in a background task)."""
        stream = await trio.open_tcp_stream("127.0.0.1", self.port)
        async with stream:
            await stream.send_all(encode(*arguments))
            return await stream.receive_some(65536)


def redis_server_fixture(tmp_path: Path) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} is not installed (.ci/run installs Debian's redis-server)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)
