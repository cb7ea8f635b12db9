"""Two trioframe instances behind a real nginx (Debian's package): the client's address
arrives through ``X-Forwarded-For`` (and a forged one does not), and draining one instance
with SIGTERM while a client keeps requesting through nginx loses no request."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from ._nginx import free_port, running_nginx

pytestmark = pytest.mark.loopback

APP = Path(__file__).with_name("proxied_app.py")
CLIENT_ADDRESS = "127.0.0.2"  # not nginx's 127.0.0.1: the test tells the two apart


@asynccontextmanager
async def instance() -> AsyncIterator[tuple[trio.Process, int]]:
    port = free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, str(APP), str(port)], stderr=subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        seen = b""
        with trio.fail_after(15):
            while b"trioframe serving on" not in seen:
                chunk = await process.stderr.receive_some()
                assert chunk, seen.decode()
                seen += chunk
        yield process, port
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def client(**kwargs: object) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=CLIENT_ADDRESS)
    return httpx.AsyncClient(transport=transport, **kwargs)  # type: ignore[arg-type]


async def test_client_addresses_arrive_through_nginx(tmp_path: Path) -> None:
    async with (
        instance() as (_, first),
        instance() as (_, second),
        running_nginx([first, second], tmp_path) as port,
        client() as http,
    ):
        url = f"http://127.0.0.1:{port}/"
        answer = (await http.get(url, headers={"x-forwarded-for": "6.6.6.6"})).json()
        assert answer["client"] == CLIENT_ADDRESS  # not the forged 6.6.6.6, not nginx
        assert answer["peer"] == "127.0.0.1"  # nginx, kept for the access log
        assert answer["scheme"] == "http" and answer["host"] == "127.0.0.1"
        pids = {(await http.get(url)).json()["pid"] for _ in range(10)}
        assert len(pids) == 2  # nginx spreads over both instances


async def test_draining_one_instance_loses_no_request(tmp_path: Path) -> None:
    async with (
        instance() as (leaving, first),
        instance() as (_, second),
        running_nginx([first, second], tmp_path) as port,
    ):
        url = f"http://127.0.0.1:{port}"
        statuses: list[int] = []
        after_exit: list[str] = []  # answers once the instance has gone
        looping = trio.Event()  # set once the clients have had a few answers

        async def loop(path: str) -> None:
            async with client(timeout=10) as http:
                while leaving.returncode is None or len(after_exit) < 10:
                    response = await http.get(url + path)
                    statuses.append(response.status_code)
                    if len(statuses) >= 10:
                        looping.set()
                    if leaving.returncode is not None:
                        after_exit.append(response.text)

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(loop, "/slow")  # requests in flight when SIGTERM lands
                nursery.start_soon(loop, "/")
                await looping.wait()
                leaving.send_signal(signal.SIGTERM)
                assert await leaving.wait() == 0
        assert statuses and set(statuses) == {200}
        assert len(statuses) > 20 and len(after_exit) >= 10
