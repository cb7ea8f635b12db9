#!/usr/bin/env python3
"""The latency of one rate-limit check: ``MemoryStore`` in the process, ``RedisStore``
against a Redis server (one EVALSHA of the GCRA script), and a plain ``PING`` on the same
client for scale.

    python bench/store_latency.py [--url redis://127.0.0.1:6379/0] [--checks 5000]
        [--concurrency 1] [--max-seconds 30]

Without ``--url`` it starts Debian's ``redis-server`` on a free loopback port (no
persistence) and stops it at the end. Prints the median and 99th percentile in
microseconds and the ratio of a Redis check to a PING. Needs the ``redis`` extra.
Not run by the tests; every phase stops after ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trioframe import MemoryStore, RedisStore

INTERVAL_US, PERIOD_US = 1, 10**12  # a limit never reached: every check is allowed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    process = subprocess.Popen(
        [
            *(binary, "--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--dir", directory),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.02)
    process.kill()
    raise SystemExit("redis-server did not start in 10 s")


async def measure(
    name: str, call: Callable[[int], Awaitable[object]], checks: int, concurrency: int, limit: float
) -> list[float]:
    """Latencies (microseconds) of ``checks`` calls, ``concurrency`` at a time."""
    for index in range(min(200, checks)):  # warm up: connection, script cache
        await call(index)
    latencies: list[float] = []
    per_task = checks // concurrency

    async def run(task: int) -> None:
        for index in range(per_task):
            started = time.perf_counter()
            await call(task * per_task + index)
            latencies.append((time.perf_counter() - started) * 1e6)

    with trio.move_on_after(limit):
        async with trio.open_nursery() as nursery:
            for task in range(concurrency):
                nursery.start_soon(run, task)
    p50 = statistics.median(latencies)
    p99 = statistics.quantiles(latencies, n=100)[98] if len(latencies) > 100 else max(latencies)
    print(f"{name:<24} {len(latencies):>7} calls  p50 {p50:9.1f} us  p99 {p99:9.1f} us")
    return latencies


async def main(args: argparse.Namespace) -> None:
    memory, redis = MemoryStore(max_keys=100_000), RedisStore(args.url, timeout=5)
    keys = [f"bench:{index % 1000}" for index in range(1000)]

    async def memory_check(index: int) -> object:
        return await memory.rate(keys[index % 1000], INTERVAL_US, PERIOD_US)

    async def redis_check(index: int) -> object:
        return await redis.rate(keys[index % 1000], INTERVAL_US, PERIOD_US)

    async def ping(index: int) -> object:
        return await redis.client.call(lambda client: client.ping())

    n, c, t = args.checks, args.concurrency, args.max_seconds
    in_memory = await measure("MemoryStore.rate", memory_check, n, 1, t)
    pings = await measure("Redis PING", ping, n, c, t)
    checks = await measure("RedisStore.rate", redis_check, n, c, t)
    print(
        f"Redis check / PING: {statistics.median(checks) / statistics.median(pings):.2f}x; "
        f"Redis check / memory check: "
        f"{statistics.median(checks) / statistics.median(in_memory):.0f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url")
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=30)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        process = None
        if arguments.url is None:
            process, arguments.url = start_redis(directory)
        try:
            trio.run(main, arguments)
        finally:
            if process is not None:
                process.terminate()
                process.wait(10)
