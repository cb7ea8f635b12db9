"""Lifecycle in a process of its own: on SIGTERM an event stream and a long poll end cleanly
and the process exits long before ``shutdown_timeout``; a lifespan that fails while entering
makes ``trioframe run`` exit with status 3 and one log line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio

from ..loopback.test_shutdown_subprocess import ProcessOutput

pytestmark = pytest.mark.loopback

APPS = Path(__file__).parent / "apps"
REPO = Path(__file__).resolve().parents[2]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_sigterm_ends_an_event_stream_and_a_long_poll_cleanly() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    # The app's shutdown_timeout is 60 s: without a clean ending this would time out.
    with trio.fail_after(20):
        process = await trio.lowlevel.open_process(
            [sys.executable, str(APPS / "streams_app.py"), str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=ENV,
            cwd=str(REPO),
        )
        try:
            assert process.stdout is not None
            output = ProcessOutput(process.stdout)
            await output.wait_for("serving on")
            lines: list[str] = []
            polled: list[httpx.Response] = []
            async with httpx.AsyncClient(timeout=15) as client, trio.open_nursery() as nursery:

                async def long_poll() -> None:
                    polled.append(await client.get(f"{url}/poll"))

                nursery.start_soon(long_poll)
                async with client.stream("GET", f"{url}/events") as response:
                    async for line in response.aiter_lines():  # a cut body would raise here
                        lines.append(line)
                        if line == "data: first":
                            await output.wait_for("events-started")
                            await output.wait_for("poll-started")
                            process.send_signal(signal.SIGTERM)
            assert lines == ["data: first", ""]
            assert (polled[0].status_code, polled[0].json()) == (200, {"events": []})
            assert await process.wait() == 0, output.text
            await output.wait_for("exited-run")
        finally:
            if process.returncode is None:
                process.kill()
                with trio.move_on_after(2):
                    await process.wait()


async def test_the_cli_exits_3_with_one_line_when_a_lifespan_fails() -> None:
    command = [sys.executable, "-m", "trioframe", "run"]
    target = "tests.lifecycle.apps.failing_lifespan:router"
    with trio.fail_after(20):
        result = await trio.run_process(
            [*command, target, "--port", str(_free_port())],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=ENV,
            cwd=str(REPO),
        )
    output = (result.stdout + result.stderr).decode()
    assert result.returncode == 3, output
    [line] = output.splitlines()
    assert "startup failed" in line
    assert "connect_database raised RuntimeError: database unreachable" in line
