"""Graceful shutdown of ``Server.run()`` on SIGTERM, in a subprocess: the request in flight
completes (with ``Connection: close``), new connections are refused, the process exits 0."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from ._support import RawConnection, simple_get

pytestmark = pytest.mark.loopback

APP = Path(__file__).parent / "apps" / "slow_app.py"
SHIELDED_APP = Path(__file__).parent / "apps" / "shielded_app.py"
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ProcessOutput:
    """Reads a subprocess's stdout line by line; ``wait_for`` returns when a line contains
    the given text."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.text = ""

    async def wait_for(self, fragment: str) -> None:
        while fragment not in self.text:
            data = await self.stream.receive_some(4096)
            if not data:
                raise AssertionError(f"process output ended before {fragment!r}:\n{self.text}")
            self.text += data.decode(errors="replace")


async def _connection_refused(port: int) -> bool:
    try:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
    except OSError:
        return True
    await stream.aclose()
    return False


async def test_sigterm_finishes_the_in_flight_request_and_exits_0() -> None:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    with trio.fail_after(10):
        process = await trio.lowlevel.open_process(
            [sys.executable, str(APP), str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(REPO),
        )
        try:
            assert process.stdout is not None
            output = ProcessOutput(process.stdout)
            await output.wait_for("serving on")

            connection = await RawConnection.open("127.0.0.1", port)
            await connection.send(simple_get("/slow"))
            await output.wait_for("slow-started")
            signalled = trio.current_time()
            process.send_signal(signal.SIGTERM)
            await output.wait_for("shutting down")

            # While the request is still in flight, the listener goes away (polled, with a
            # bound: the server is another process).
            for _ in range(50):
                if await _connection_refused(port):
                    break
                await trio.sleep(0.01)
            else:
                raise AssertionError("new connections were still accepted during shutdown")

            response = await connection.read_response()
            assert response.status == 200
            assert response.body == b"slow done"
            assert response.closes
            assert await connection.read_until_eof() == b""
            await connection.aclose()

            assert await process.wait() == 0, output.text
            assert trio.current_time() - signalled < 5.0
            await output.wait_for("exited-run")
            assert await _connection_refused(port)
        finally:
            if process.returncode is None:
                process.kill()
                with trio.move_on_after(2):
                    await process.wait()


async def _start_stuck_request(
    shutdown_timeout: float,
) -> tuple[trio.Process, ProcessOutput, RawConnection]:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SHIELDED_APP), str(port), str(shutdown_timeout)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=str(REPO),
    )
    assert process.stdout is not None
    output = ProcessOutput(process.stdout)
    await output.wait_for("serving on")
    connection = await RawConnection.open("127.0.0.1", port)
    await connection.send(simple_get("/stuck"))
    await output.wait_for("stuck-started")
    return process, output, connection


async def test_a_second_signal_exits_at_once_past_a_shielded_handler() -> None:
    with trio.fail_after(10):
        process, output, connection = await _start_stuck_request(shutdown_timeout=30.0)
        try:
            process.send_signal(signal.SIGTERM)
            await output.wait_for("shutting down")
            second = trio.current_time()
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 1, output.text
            assert trio.current_time() - second < 2.0
            await output.wait_for("second SIGINT: exiting now")
            assert "exited-run" not in output.text
            await connection.aclose()
        finally:
            if process.returncode is None:
                process.kill()


async def test_a_shielded_handler_cannot_hold_the_process_past_the_deadline() -> None:
    # One SIGTERM only: graceful shutdown gives up after shutdown_timeout, the final grace
    # (1 s) and HARD_EXIT_GRACE (1 s), and the process exits 1 without waiting further.
    with trio.fail_after(15):
        process, output, connection = await _start_stuck_request(shutdown_timeout=0.5)
        try:
            signalled = trio.current_time()
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 1, output.text
            elapsed = trio.current_time() - signalled
            assert 2.5 <= elapsed < 6.0, elapsed
            await output.wait_for("shutdown still running after 2.5 s: exiting now")
            await connection.aclose()
        finally:
            if process.returncode is None:
                process.kill()


async def test_run_logs_where_it_serves_without_any_logging_configured() -> None:
    # A program that calls run() and configures no logging still sees the one line saying
    # where it serves (and that it shuts down), on stderr.
    port = _free_port()
    code = (
        "from trioframe import Router, Server\n"
        "async def ok() -> str:\n"
        "    return 'ok'\n"
        f"Server(Router().get('/', ok), ('127.0.0.1', {port})).run()\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    with trio.fail_after(10):
        process = await trio.lowlevel.open_process(
            [sys.executable, "-c", code], stderr=subprocess.PIPE, env=env, cwd=str(REPO)
        )
        try:
            assert process.stderr is not None
            output = ProcessOutput(process.stderr)
            await output.wait_for(f"trioframe serving on http://127.0.0.1:{port}")
            process.send_signal(signal.SIGTERM)
            await output.wait_for("SIGTERM received: shutting down")
            assert await process.wait() == 0, output.text
        finally:
            if process.returncode is None:
                process.kill()
                with trio.move_on_after(2):
                    await process.wait()
