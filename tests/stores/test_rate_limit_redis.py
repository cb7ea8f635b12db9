"""RateLimitMiddleware with a shared store: the limit at N-1/N/N+1 on both stores, exactly
the limit across two application instances and across a two-worker fleet sharing one Redis,
the same decisions from both implementations of the algorithm, and what happens when Redis
is stopped or too slow (``on_store_error``), then back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.app.helpers import assert_error_body
from trioframe import MemoryStore, RedisStore, Request, Response, Router, Server, StoreUnavailable
from trioframe._stores.base import Rate
from trioframe._stores.gcra import LUA
from trioframe.middleware import RateLimitMiddleware
from trioframe.testing import TestClient

from ..cli._cli import Server as RunningServer
from .redis_server import RedisServer

pytestmark = pytest.mark.loopback

FLEET_APP = Path(__file__).with_name("fleet_app.py")
SERVING = re.compile(rb"trioframe serving on http://127\.0\.0\.1:(\d+) \((\d+) workers\)")


async def hello() -> Response:
    return Response.text("hi")


def limited(limiter: RateLimitMiddleware) -> Router:
    return Router().get("/", hello).middleware(limiter)


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_the_limit_at_n_minus_one_n_and_n_plus_one(
    kind: str, request: pytest.FixtureRequest
) -> None:
    if kind == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        store: MemoryStore | RedisStore = RedisStore(server.url)
    else:
        store = MemoryStore()
    limiter = RateLimitMiddleware(5, per_seconds=60, store=store)
    with trio.fail_after(10):
        async with TestClient(limited(limiter)) as client:
            answers = [await client.get("/") for _ in range(6)]
    assert [r.status_code for r in answers] == [200] * 5 + [429]
    assert [r.headers["ratelimit-remaining"] for r in answers] == ["4", "3", "2", "1", "0", "0"]
    assert answers[3].headers["ratelimit-reset"] == "48"  # 4 of 5 used, 12 s each
    assert answers[5].headers["retry-after"] == "12"
    assert limiter.store_errors == 0


async def burst(url: str, count: int) -> list[int]:
    """``count`` concurrent requests to ``url`` (each on its own connection)."""
    statuses: list[int] = []

    async def one() -> None:
        async with httpx.AsyncClient() as client:
            statuses.append((await client.get(url)).status_code)

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)
    return statuses


async def test_two_instances_share_exactly_one_limit(redis_server: RedisServer) -> None:
    # Two servers, each with its own RedisStore object configured alike: what two processes
    # of one application would have.
    servers = [
        Server(
            limited(RateLimitMiddleware(10, 60, store=RedisStore(redis_server.url))), "127.0.0.1:0"
        )
        for _ in range(2)
    ]
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            ports = [(await nursery.start(server.serve))[0][1] for server in servers]
            urls = [f"http://127.0.0.1:{port}/" for port in ports]
            results: list[list[int]] = [[], []]

            async def against(index: int) -> None:
                results[index] = await burst(urls[index], 15)

            async with trio.open_nursery() as clients:
                clients.start_soon(against, 0)
                clients.start_soon(against, 1)
            for server in servers:
                server.shutdown()
    statuses = results[0] + results[1]
    assert statuses.count(200) == 10 and statuses.count(429) == 20
    assert all(200 in r or 429 in r for r in results)


async def test_a_two_worker_fleet_shares_exactly_one_limit(redis_server: RedisServer) -> None:
    environment = {**os.environ, "FLEET_REDIS_URL": redis_server.url}
    process = await trio.lowlevel.open_process(
        [sys.executable, str(FLEET_APP)], stderr=subprocess.PIPE, env=environment
    )
    running = RunningServer(process)
    try:
        with trio.fail_after(30):
            port = int((await running.read_log_until(SERVING))[1])
            pids: set[str] = set()
            statuses: list[int] = []

            async def one() -> None:
                async with httpx.AsyncClient() as client:
                    response = await client.get(f"http://127.0.0.1:{port}/")
                statuses.append(response.status_code)
                pids.add(response.headers["x-worker"])

            async with trio.open_nursery() as nursery:
                for _ in range(40):
                    nursery.start_soon(one)
    finally:
        process.kill()
        await process.wait()
    assert statuses.count(200) == 10 and statuses.count(429) == 30
    assert len(pids) == 2  # both workers answered, and counted in the one limit


# -- one algorithm, two implementations ----------------------------------------------------------

STEPS = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 40_000_000)),  # (key, microseconds later)
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    limit=st.integers(1, 5),
    interval=st.integers(10_000_000, 30_000_000),  # long enough not to expire in real time
    steps=STEPS,
)
def test_memory_and_redis_take_the_same_decisions(
    redis_server: RedisServer, limit: int, interval: int, steps: list[tuple[int, int]]
) -> None:
    store = RedisStore(redis_server.url, prefix=f"prop:{uuid.uuid4().hex}:")
    memory = MemoryStore()
    period = interval * limit

    async def main() -> None:
        for key, later in steps:
            clock.jump(later / 1_000_000)
            now = round(trio.current_time() * 1_000_000)
            expected = await memory.rate(f"k{key}", interval, period)
            name = f"{store.prefix}k{key}"
            answer = await store.client.call(
                lambda redis, name=name, now=now: redis.eval(LUA, [name], [interval, period, now])
            )
            assert Rate(answer[0] == 1, *answer[1:]) == expected, (key, now)  # type: ignore[index]

    clock = trio.testing.MockClock()
    trio.run(main, clock=clock)


# -- when Redis fails ----------------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "while_down"), [("allow", 200), ("deny", 503)])
async def test_redis_stopped_then_restarted(
    redis_server: RedisServer, policy: str, while_down: int
) -> None:
    store = RedisStore(redis_server.url, timeout=0.5)
    limiter = RateLimitMiddleware(100, 60, store=store, on_store_error=policy)  # type: ignore[arg-type]
    with trio.fail_after(20):
        async with TestClient(limited(limiter)) as client:
            assert (await client.get("/")).headers["ratelimit-remaining"] == "99"
            redis_server.stop()
            down = [await client.get("/") for _ in range(3)]
            assert [r.status_code for r in down] == [while_down] * 3
            assert all("ratelimit-limit" not in r.headers for r in down)
            assert limiter.store_errors == 3
            redis_server.start()  # empty: the restarted server lost the count
            await trio.sleep(1.1)  # past the longest backoff
            back = await client.get("/")
    assert back.status_code == 200 and "ratelimit-remaining" in back.headers


async def test_a_slow_redis_is_a_503_for_that_call_only(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, timeout=0.2)

    async def free() -> str:
        return "free"

    def key(request: Request) -> str | None:
        return None if request.path == "/free" else "client"  # /free never asks the store

    limiter = RateLimitMiddleware(100, 60, key, store=store, on_store_error="deny")
    router = Router().get("/free", free).get("/", hello).middleware(limiter)
    with trio.fail_after(20):
        async with TestClient(router) as client:
            assert (await client.get("/")).status_code == 200
            async with trio.open_nursery() as nursery:
                nursery.start_soon(redis_server.command, "DEBUG", "SLEEP", "1.5")
                await trio.sleep(0.1)  # the server is asleep now
                started = trio.current_time()
                slow = await client.get("/")
                assert trio.current_time() - started < 0.5  # the timeout, not the sleep
                assert_error_body(slow, 503, "store unavailable")  # no address of Redis
                assert (await client.get("/free")).text == "free"  # no store: unaffected
            # The sleep is over: the next attempt (after the backoff) works.
            await trio.sleep(1.1)
            assert (await client.get("/")).status_code == 200


async def test_a_cancelled_call_leaves_the_client_usable(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, timeout=5)
    with trio.fail_after(20):
        await store.set("a", b"1", 60)
        await store.set("b", b"2", 60)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(redis_server.command, "DEBUG", "SLEEP", "0.5")
            await trio.sleep(0.1)
            with trio.move_on_after(0.1) as scope:
                await store.get("a")  # waits for the sleeping server: cancelled
            assert scope.cancelled_caught
        # Its answer arrives later and is dropped: the next call gets its own answer.
        assert await store.get("b") == b"2"
        assert await store.get("a") == b"1"
    assert store.client.failures == 0


async def test_redis_killed_mid_command_fails_that_call_and_recovers(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url, timeout=5)
    with trio.fail_after(20):
        await store.set("a", b"1", 60)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(redis_server.command, "DEBUG", "SLEEP", "3")
            await trio.sleep(0.1)

            async def kill_soon() -> None:
                await trio.sleep(0.2)
                redis_server.stop(9)

            nursery.start_soon(kill_soon)
            started = trio.current_time()
            with pytest.raises(StoreUnavailable):
                await store.get("a")  # its connection is cut while it waits
            assert trio.current_time() - started < 2  # not the 5 s timeout
            nursery.cancel_scope.cancel()
        with pytest.raises(StoreUnavailable):
            await store.get("a")  # down (or in the backoff): fails at once
        redis_server.start()
        await trio.sleep(1.1)
        await store.set("a", b"2", 60)
        assert await store.get("a") == b"2"
