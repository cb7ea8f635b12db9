"""``examples/hello.py``: in memory through its router, and as the README runs it."""

from __future__ import annotations

import os
import pathlib
import runpy
import signal
import socket
import subprocess
import sys

import httpx
import pytest
import trio

from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "hello.py"


async def test_hello_routes_in_memory() -> None:
    router = runpy.run_path(str(EXAMPLE))["router"]
    async with TestClient(router) as client:
        assert (await client.get("/")).text == "Hello from trioframe!"
        assert (await client.get("/users/1")).json() == {"id": 1, "name": "Ada"}
        missing = await client.get("/users/2")
        assert missing.status_code == 404
        assert missing.json()["message"] == "user 2 not found"


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        # as the server binds: a connection on the port still in TIME_WAIT does not count
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.loopback
async def test_hello_serves_on_port_3000_and_stops_on_sigint() -> None:
    if not _port_is_free(3000):
        pytest.skip("127.0.0.1:3000 is taken on this machine")
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parents[1])}
    process = await trio.lowlevel.open_process(
        [sys.executable, str(EXAMPLE)], env=env, stdout=subprocess.DEVNULL
    )
    try:
        with trio.fail_after(10):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", 3000)
                except OSError:
                    await trio.sleep(0.05)
                    continue
                await stream.aclose()
                break
            with httpx.Client(base_url="http://127.0.0.1:3000") as client:
                response = await trio.to_thread.run_sync(client.get, "/")
            assert response.text == "Hello from trioframe!"
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
