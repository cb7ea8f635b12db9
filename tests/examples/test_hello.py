"""``examples/hello.py``: in memory through its router, and as the README runs it."""

from __future__ import annotations

import pathlib
import runpy
import signal

import httpx
import pytest
import trio

from trioframe.testing import TestClient

from ._script import running_example

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "hello.py"


async def test_hello_routes_in_memory() -> None:
    router = runpy.run_path(str(EXAMPLE))["router"]
    async with TestClient(router) as client:
        assert (await client.get("/")).text == "Hello from trioframe!"
        assert (await client.get("/users/1")).json() == {"id": 1, "name": "Ada"}
        missing = await client.get("/users/2")
        assert missing.status_code == 404
        assert missing.json()["message"] == "user 2 not found"


@pytest.mark.loopback
async def test_hello_serves_on_its_port_and_stops_on_sigint() -> None:
    """Run as the README runs it, with a free port in ``PORT`` (the script's default is 3000),
    so the test does not depend on 3000 being free; the launcher checks the serving line
    names 127.0.0.1 and that port."""
    with trio.fail_after(10):
        async with running_example(EXAMPLE) as (process, port):
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
                response = await trio.to_thread.run_sync(client.get, "/")
            assert response.text == "Hello from trioframe!"
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
