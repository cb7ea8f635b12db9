"""The worker supervisor, as a user runs it: ``python fleet_app.py`` whose ``Server.run()``
has ``workers=2``, driven by signals and real HTTP clients over loopback. Each test is bounded
in time; the fleet binds 127.0.0.1 port 0 and its serving line says the port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from ..cli._cli import Server, serving

pytestmark = pytest.mark.loopback

APP = Path(__file__).with_name("fleet_app.py")
SERVING = re.compile(rb"trioframe serving on http://127\.0\.0\.1:(\d+) \((\d+) workers\)")


def url_of(fleet: Server) -> str:
    return f"http://127.0.0.1:{fleet.port}"


async def pids(fleet: Server, count: int) -> set[str]:
    """The worker pids that answer ``count`` requests, each on a new connection."""
    seen = set()
    for _ in range(count):
        async with httpx.AsyncClient() as client:
            seen.add((await client.get(url_of(fleet) + "/")).text)
    return seen


async def serving_pids(fleet: Server, count: int) -> set[str]:
    """The pids of ``count`` workers, once each has answered a request. With one shared
    socket, whichever worker wakes first takes a connection, and one worker can take forty
    in a row; so ask until ``count`` have answered (the caller bounds the time)."""
    seen: set[str] = set()
    while len(seen) < count:
        seen |= await pids(fleet, 10)
    return seen


async def log_shows(fleet: Server, pattern: bytes) -> None:
    await fleet.read_log_until(re.compile(pattern))


async def fleet_log(fleet: Server, pattern: bytes, start: int = 0) -> re.Match[bytes]:
    """The first match of ``pattern`` in the log past ``start``, once it is logged."""
    return await fleet.read_log_until(re.compile(pattern), start)


class Counter:
    """A count that tasks can wait to reach."""

    def __init__(self) -> None:
        self.value = 0
        self._waiters: list[tuple[int, trio.Event]] = []

    def add(self) -> None:
        self.value += 1
        for target, event in self._waiters:
            if self.value >= target:
                event.set()

    async def reach(self, target: int) -> None:
        event = trio.Event()
        self._waiters.append((target, event))
        if self.value >= target:
            event.set()
        await event.wait()


@asynccontextmanager
async def fleet(**settings: str) -> AsyncIterator[Server]:
    environment = {**os.environ, **{f"FLEET_{k.upper()}": v for k, v in settings.items()}}
    process = await trio.lowlevel.open_process(
        [sys.executable, str(APP)], stderr=subprocess.PIPE, env=environment
    )
    running = Server(process)
    try:
        if settings.get("fail") != "1":
            with trio.fail_after(20):
                running.port = int((await running.read_log_until(SERVING))[1])
        yield running
    finally:
        if process.returncode is None:
            process.kill()  # the supervisor: its workers see their pipe break and leave
            await process.wait()


async def test_two_workers_serve_and_sigterm_drains_them() -> None:
    async with fleet() as running:
        assert b"(2 workers)" in running.log
        with trio.fail_after(20):
            assert len(await serving_pids(running, 2)) == 2  # both take connections
        async with trio.open_nursery() as nursery:
            answer: list[str] = []

            async def slow_request() -> None:
                async with httpx.AsyncClient() as client:
                    answer.append((await client.get(url_of(running) + "/slow?seconds=1.5")).text)

            nursery.start_soon(slow_request)
            with trio.fail_after(10):
                await log_shows(running, rb"slow request started")  # in flight
            running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await running.finish() == 0
    assert answer and answer[0].startswith("slept")  # drained, not cut off
    assert b"all workers have stopped" in running.log
    assert b"Traceback" not in running.log


async def test_a_killed_worker_is_started_again() -> None:
    async with fleet() as running:
        with trio.fail_after(20):
            before = await serving_pids(running, 2)
        victim = int(sorted(before)[0])
        os.kill(victim, signal.SIGKILL)
        with trio.fail_after(15):
            await log_shows(running, rb"worker \d \(pid %d\) exited with status -9" % victim)
            after = await serving_pids(running, 2)  # until the replacement serves too
        assert str(victim) not in after
        running.process.send_signal(signal.SIGINT)
        with trio.fail_after(15):
            assert await running.finish() == 0


async def test_a_worker_whose_app_task_fails_exits_1_and_is_started_again() -> None:
    async with fleet() as running:
        async with httpx.AsyncClient() as client:
            victim = int((await client.get(url_of(running) + "/fail-later")).text)
        with trio.fail_after(15):
            await log_shows(running, rb"RuntimeError: the nightly job failed")  # its traceback
            await log_shows(running, rb"worker \d \(pid %d\) exited with status 1\b" % victim)
            after = await serving_pids(running, 2)  # until the replacement serves too
        assert str(victim) not in after
        assert b"startup failed" not in running.log
        running.process.send_signal(signal.SIGINT)
        with trio.fail_after(15):
            assert await running.finish() == 0


@pytest.mark.parametrize("reuse_port", ["1", "0"], ids=["reuse-port", "shared-socket"])
async def test_a_worker_that_cannot_start_again_is_retried_while_the_other_serves(
    tmp_path: Path, reuse_port: str
) -> None:
    """Past the fleet's first startup, a slot whose new worker fails to start is retried with
    backoff, each failure logged, while the healthy worker goes on serving; once the
    application can be imported again, the slot serves again."""
    broken = tmp_path / "broken"
    async with fleet(broken_while=str(broken), reuse_port=reuse_port) as running:
        with trio.fail_after(20):
            victim, survivor = sorted(await serving_pids(running, 2))
        broken.touch()
        os.kill(int(victim), signal.SIGKILL)
        failed = rb"worker \d \(pid \d+\) failed to start: running .*fleet_app\.py raised "
        failed += rb"RuntimeError: the application cannot be imported now.*; starting it again"
        with trio.fail_after(20):
            first = await fleet_log(running, failed)
            await fleet_log(running, failed, first.end())  # retried, and logged again
        assert await pids(running, 10) == {survivor}  # the fleet did not stop
        assert running.process.returncode is None
        broken.unlink()
        with trio.fail_after(30):
            await serving_pids(running, 2)  # until the slot serves again
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await running.finish() == 0
    assert b"startup failed" not in running.log


async def test_a_stuck_worker_hands_its_accept_queue_to_a_new_one() -> None:
    """With ``reuse_port`` each worker has its own accept queue; a worker stuck in a handler
    hands its socket to a new worker after a few silent seconds, well before its heartbeat
    timeout (30 s here), so connections queued for it are answered."""
    async with fleet(reuse_port="1") as running:
        async with httpx.AsyncClient(timeout=0.5) as client:
            with pytest.raises(httpx.TimeoutException):
                await client.get(url_of(running) + "/block")
        with trio.fail_after(15):
            await log_shows(running, rb"no heartbeat for 5 s: a new worker takes over its socket")
        # New connections, about half of them hashed to the stuck worker's socket: each is
        # answered well within the 30 s the heartbeat would take.
        with trio.fail_after(15):
            assert len(await serving_pids(running, 2)) == 2
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await running.finish() == 0


@pytest.mark.parametrize("reuse_port", ["1", "0"], ids=["reuse-port", "shared-socket"])
async def test_sighup_restarts_every_worker_without_refusing_a_connection(reuse_port: str) -> None:
    async with fleet(reuse_port=reuse_port) as running:
        with trio.fail_after(20):
            before = await serving_pids(running, 2)
        failures: list[BaseException] = []
        answered = Counter()
        stop = trio.Event()

        async def client_loop() -> None:
            while not stop.is_set():
                try:  # a new connection each time: an accept queue closing would show
                    async with httpx.AsyncClient() as client:
                        await client.get(url_of(running) + "/")
                    answered.add()
                except httpx.HTTPError as error:
                    failures.append(error)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(client_loop)
            nursery.start_soon(client_loop)
            with trio.fail_after(30):
                await answered.reach(10)  # the clients are looping
                running.process.send_signal(signal.SIGHUP)
                await log_shows(running, rb"rolling restart done")
                await answered.reach(answered.value + 10)  # and go on after it
            stop.set()
        assert failures == []
        with trio.fail_after(20):
            after = await serving_pids(running, 2)
        assert not after & before  # every worker is new
        assert answered.value > 20
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await running.finish() == 0


async def test_a_worker_that_fails_to_start_stops_the_fleet_with_status_3() -> None:
    async with fleet(fail="1") as running:
        with trio.fail_after(20):
            status = await running.finish()
    assert status == 3
    assert (
        b"startup failed in worker" in running.log
        and b"failing_lifespan raised ConnectionError: the database is unreachable" in running.log
    )
    assert b"serving on" not in running.log


async def test_a_worker_whose_loop_is_blocked_is_replaced() -> None:
    async with fleet(heartbeat="2") as running:
        async with httpx.AsyncClient(timeout=0.5) as client:
            with pytest.raises(httpx.TimeoutException):
                await client.get(url_of(running) + "/block")
        with trio.fail_after(15):
            await log_shows(running, rb"no heartbeat for 2 s \(its event loop is blocked\)")
            await log_shows(running, rb"stopped answering heartbeats and was killed")
            await serving_pids(running, 2)  # until the replacement serves
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await running.finish() == 0


async def test_workers_are_recycled_after_their_request_budget() -> None:
    async with fleet(max_requests="5") as running:
        with trio.fail_after(30):
            seen: set[str] = set()
            while len(seen) <= 2:  # until replacements answer (every answer a success)
                seen |= await pids(running, 10)
        running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await running.finish() == 0
        assert b"served its requests: replacing it" in running.log


async def test_the_command_line_starts_a_fleet() -> None:
    arguments = ["run", "tests.workers.fleet_app:router", "--port", "0", "--workers", "2"]
    with trio.fail_after(30):
        async with serving(*arguments) as running:
            assert SERVING.search(running.log)
            assert len(await serving_pids(running, 2)) == 2
            running.process.send_signal(signal.SIGTERM)
            assert await running.finish() == 0
    assert b"Traceback" not in running.log
