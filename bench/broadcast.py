#!/usr/bin/env python3
"""Publish-to-delivery latency of ``Broadcast``, over memory and over Redis.

    python bench/broadcast.py [--messages 2000] [--subscribers 1,10] [--redis-url URL]
        [--only memory,redis]

Each measurement publishes ``--messages`` messages one at a time (a small JSON object
carrying its ``trio.current_time()`` stamp) and waits until every one of ``--subscribers``
subscriptions has received it before publishing the next: the time from ``publish`` to the
last subscriber's receipt, percentiles in microseconds. Over Redis, without ``--redis-url``,
a ``redis-server`` (``--save "" --appendonly no``) is started on a free loopback port in a
temporary directory and stopped at the end. Bounded: each measurement stops after 60 s.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile

import trio

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))

from tests.stores.redis_server import RedisServer
from trioframe import Broadcast, RedisStore


async def measure(broadcast: Broadcast, messages: int, subscribers: int) -> list[float]:
    latencies: list[float] = []
    async with trio.open_nursery() as nursery:
        received = [trio.Event() for _ in range(messages)]
        counts = [0] * messages
        ready = trio.Event()
        subscribed = 0

        async def subscriber() -> None:
            nonlocal subscribed
            async with broadcast.subscribe("bench", max_pending=messages) as inbox:
                subscribed += 1
                if subscribed == subscribers:
                    ready.set()
                async for message in inbox:
                    n = message["n"]
                    counts[n] += 1
                    if counts[n] == subscribers:
                        latencies.append(trio.current_time() - message["at"])
                        received[n].set()

        for _ in range(subscribers):
            nursery.start_soon(subscriber)
        with trio.fail_after(60):
            await ready.wait()
            for n in range(messages):
                await broadcast.publish("bench", {"n": n, "at": trio.current_time()})
                await received[n].wait()
        nursery.cancel_scope.cancel()
    return latencies


def report(name: str, subscribers: int, latencies: list[float]) -> None:
    micros = sorted(x * 1e6 for x in latencies)
    p = statistics.quantiles(micros, n=100)
    print(
        f"{name:7} subscribers={subscribers:<3} n={len(micros):<6} "
        f"p50={p[49]:8.0f} us  p90={p[89]:8.0f} us  p99={p[98]:8.0f} us  max={micros[-1]:8.0f} us"
    )


async def main(args: argparse.Namespace) -> None:
    fanouts = [int(x) for x in args.subscribers.split(",")]
    only = set(args.only.split(","))
    if "memory" in only:
        for count in fanouts:
            report("memory", count, await measure(Broadcast(), args.messages, count))
    if "redis" in only:
        with tempfile.TemporaryDirectory() as directory:
            server = None if args.redis_url else RedisServer(pathlib.Path(directory))
            if server is not None:
                server.start()
            try:
                url = args.redis_url or server.url  # type: ignore[union-attr]
                broadcast = Broadcast(RedisStore(url))
                async with trio.open_nursery() as nursery, broadcast.lifespan(nursery):
                    for count in fanouts:
                        report("redis", count, await measure(broadcast, args.messages, count))
                    nursery.cancel_scope.cancel()
            finally:
                if server is not None:
                    server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--subscribers", default="1,10")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--only", default="memory,redis")
    trio.run(main, parser.parse_args())
