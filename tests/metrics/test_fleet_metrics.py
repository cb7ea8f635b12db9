"""Metrics of a worker fleet (prometheus_client's multiprocess mode): ``python fleet_app.py``
with two workers, real clients over loopback. Whichever worker answers a scrape, it shows the
whole fleet's figures; a worker killed keeps its counts in the sums and loses its live
gauges; the fleet's own directory is removed when it stops, a directory the user set is not.
Every wait is bounded."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from ..cli._cli import Server
from ._scrape import Scrape

pytestmark = pytest.mark.loopback

APP = Path(__file__).with_name("fleet_app.py")
SERVING = re.compile(rb"trioframe serving on http://127\.0\.0\.1:(\d+) \((\d+) workers\)")


@asynccontextmanager
async def fleet(environment: Mapping[str, str] | None = None) -> AsyncIterator[Server]:
    """The fleet, once it serves (its port in ``.port``); killed on the way out if still
    running (its workers see their pipe break and leave)."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(APP)],
        stderr=subprocess.PIPE,
        env={**os.environ, **(environment or {})},
    )
    running = Server(process)
    try:
        with trio.fail_after(30):
            running.port = int((await running.read_log_until(SERVING))[1])
        yield running
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def get(running: Server, path: str) -> httpx.Response:
    """One request on a new connection (so that either worker may take it)."""
    async with httpx.AsyncClient() as client:
        response = await client.get(f"http://127.0.0.1:{running.port}{path}")
    assert response.status_code == 200
    return response


async def spread_requests(running: Server, at_least: int) -> dict[str, int]:
    """Requests to ``/`` until there have been ``at_least`` and each worker answered some;
    how many each answered."""
    answered: dict[str, int] = {}
    with trio.fail_after(60):
        while sum(answered.values()) < at_least or len(answered) < 2:
            worker = (await get(running, "/")).headers["x-worker"]
            answered[worker] = answered.get(worker, 0) + 1
    return answered


async def scrape(running: Server) -> tuple[str, Scrape]:
    """The worker that answered a scrape, and what it said."""
    response = await get(running, "/metrics")
    return response.headers["x-worker"], Scrape(response.text)


async def eventually(read: Callable[[], Awaitable[Scrape]], done: Callable[[Scrape], bool]) -> None:
    with trio.fail_after(20):
        while True:
            if done(await read()):
                return
            await trio.sleep(0.05)


async def test_every_worker_answers_a_scrape_with_the_whole_fleet() -> None:
    async with fleet() as running:
        answered = await spread_requests(running, 20)
        total = sum(answered.values())
        scrapers: set[str] = set()
        with trio.fail_after(60):
            while scrapers != set(answered):  # until both workers have answered a scrape
                worker, page = await scrape(running)
                scrapers.add(worker)
                assert page.requests(http_route="/", http_response_status_code="200") == total
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0


async def test_a_killed_worker_keeps_its_counts_and_loses_its_gauges() -> None:
    async with fleet() as running:
        answered = await spread_requests(running, 10)
        # A keep-alive connection to one worker: it counts among the open connections.
        victim, held = "", httpx.AsyncClient()
        async with held:
            with trio.fail_after(60):
                while victim == "":
                    response = await held.get(f"http://127.0.0.1:{running.port}/")
                    answered[response.headers["x-worker"]] += 1
                    if response.headers["x-worker"] == min(answered):
                        victim = min(answered)
                    else:  # the other worker: try a new connection
                        await held.aclose()
                        held = httpx.AsyncClient()
            total = sum(answered.values())

            async def read() -> Scrape:
                return (await scrape(running))[1]

            open_connections = "trioframe_open_connections"
            # the held one and the scrape's own
            await eventually(read, lambda page: page.value(open_connections) == 2)
            os.kill(int(victim), signal.SIGKILL)
            with trio.fail_after(20):
                await running.read_log_until(re.compile(rb"pid %s\) exited" % victim.encode()))

            def after_the_kill(page: Scrape) -> bool:
                # the scrape's own connection only: the victim's gauges are gone (marked dead)
                return page.value(open_connections) == 1

            await eventually(read, after_the_kill)
            _, page = await scrape(running)
            assert page.requests(http_route="/", http_response_status_code="200") == total
            assert page.value("http_server_active_requests") == 1  # this scrape
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0


async def test_the_fleet_removes_its_own_directory() -> None:
    async with fleet() as running:
        directory = (await get(running, "/directory")).text
        assert await trio.Path(directory).is_dir()
        assert Path(directory).name.startswith("trioframe-metrics-")
        await get(running, "/metrics")
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0
    assert not await trio.Path(directory).exists()


async def test_a_directory_the_user_set_is_used_and_kept(tmp_path: Path) -> None:
    mine = tmp_path / "metrics"
    mine.mkdir()
    async with fleet({"PROMETHEUS_MULTIPROC_DIR": str(mine)}) as running:
        assert (await get(running, "/directory")).text == str(mine)
        await spread_requests(running, 4)
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0
    assert [p for p in await trio.Path(mine).iterdir() if p.suffix == ".db"]  # the counts stay
