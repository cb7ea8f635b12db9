"""``Broadcast`` over a real ``redis-server`` on a loopback port: delivery between two
broadcasts (as in two processes), one subscriber connection per broadcast, and what happens
while Redis is down and after it is back."""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import coredis
import pytest
import trio

from trioframe import Broadcast, ConfigurationError, RedisStore, StoreUnavailable, Subscription

from .redis_server import RedisServer

pytestmark = pytest.mark.loopback

TIMEOUT = 0.5


@asynccontextmanager
async def running(server: RedisServer, **kwargs: object) -> AsyncIterator[Broadcast]:
    broadcast = Broadcast(RedisStore(server.url, timeout=TIMEOUT), **kwargs)  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery, broadcast.lifespan(nursery):
        yield broadcast
        nursery.cancel_scope.cancel()


async def received(messages: Subscription, count: int, within: float = 2) -> list[object]:
    got = []
    with trio.fail_after(within):
        async for message in messages:
            got.append(message)
            if len(got) == count:
                break
    return got


async def subscribers(server: RedisServer, channel: str) -> int:
    """How many Redis connections are subscribed to ``channel`` (PUBSUB NUMSUB)."""
    async with coredis.Redis.from_url(server.url) as client:
        counts = await client.pubsub_numsub(f"trioframe:broadcast:{channel}")
    return int(next(iter(counts.values())))


async def test_messages_reach_every_subscriber_in_order_as_published(
    redis_server: RedisServer,
) -> None:
    kinds: list[object] = ["text", b"\x00\xff", {"a": [1, None]}, 7, None, "", b""]
    async with (
        running(redis_server) as broadcast,
        broadcast.subscribe("room") as first,
        broadcast.subscribe("room") as second,
    ):
        numbers = list(range(200))
        for message in [*kinds, *numbers]:
            await broadcast.publish("room", message)
        for messages in (first, second):
            got = await received(messages, len(kinds) + len(numbers))
            assert got == [*kinds, *numbers]
            assert [type(m) for m in got[: len(kinds)]] == [type(m) for m in kinds]


async def test_two_broadcasts_on_one_redis_hear_each_other(redis_server: RedisServer) -> None:
    async with (
        running(redis_server) as one,
        running(redis_server) as two,
        one.subscribe("c") as at_one,
        two.subscribe("c") as at_two,
    ):
        await one.publish("c", "from one")
        await two.publish("c", {"from": "two"})
        assert await received(at_one, 2) == ["from one", {"from": "two"}]
        assert await received(at_two, 2) == ["from one", {"from": "two"}]


async def test_a_process_has_one_subscriber_connection_per_broadcast(
    redis_server: RedisServer,
) -> None:
    async with running(redis_server) as broadcast:
        async with (
            broadcast.subscribe("c") as a,
            broadcast.subscribe("c") as b,
            broadcast.subscribe("d"),
        ):
            assert await subscribers(redis_server, "c") == 1
            assert await subscribers(redis_server, "d") == 1
            async with broadcast.subscribe("c"):
                pass  # another local subscriber leaving does not unsubscribe the process
            await broadcast.publish("c", 1)
            assert await received(a, 1) == await received(b, 1) == [1]
        with trio.fail_after(2):  # the last local subscriber gone: the process unsubscribes
            # Redis is another process: poll it.
            while await subscribers(redis_server, "c") or await subscribers(redis_server, "d"):  # noqa: ASYNC110
                await trio.sleep(0.01)


async def test_the_prefix_separates_broadcasts(redis_server: RedisServer) -> None:
    other = Broadcast(RedisStore(redis_server.url, prefix="other:", timeout=TIMEOUT))
    async with (
        running(redis_server) as broadcast,
        trio.open_nursery() as nursery,
        other.lifespan(nursery),
        broadcast.subscribe("c") as mine,
        other.subscribe("c") as theirs,
    ):
        await other.publish("c", "theirs")
        await broadcast.publish("c", "mine")
        assert await received(mine, 1) == ["mine"]
        assert await received(theirs, 1) == ["theirs"]
        nursery.cancel_scope.cancel()


async def test_a_slow_subscriber_loses_the_oldest_messages(redis_server: RedisServer) -> None:
    async with (
        running(redis_server, max_pending=3) as broadcast,
        broadcast.subscribe("c") as slow,
        broadcast.subscribe("c", max_pending=100) as fast,
    ):
        for n in range(10):
            await broadcast.publish("c", n)
        assert await received(fast, 10) == list(range(10))
        assert slow.dropped == 7
        assert await received(slow, 3) == [7, 8, 9]


async def wait_until_delivered(broadcast: Broadcast, messages: Subscription) -> None:
    """Publish until ``messages`` gets something: the subscription is live again."""
    with trio.fail_after(10):
        while True:
            try:
                await broadcast.publish(messages.channel, "ping")
            except StoreUnavailable:
                await trio.sleep(0.05)
                continue
            with trio.move_on_after(0.2):
                assert await messages.__anext__() == "ping"
                return


async def test_while_redis_is_down_publish_fails_and_subscriptions_survive(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "trioframe")
    async with (
        running(redis_server) as broadcast,
        running(redis_server) as elsewhere,
        broadcast.subscribe("c") as messages,
    ):
        await elsewhere.publish("c", "before")
        assert await received(messages, 1) == ["before"]

        redis_server.stop(signal.SIGKILL)
        with trio.fail_after(TIMEOUT + 2), pytest.raises(StoreUnavailable):
            await broadcast.publish("c", "while down")
        with trio.fail_after(TIMEOUT + 2), pytest.raises(StoreUnavailable):
            async with broadcast.subscribe("new"):
                pass
        assert broadcast._fanout.channels() == {"c"}  # the failed subscription is gone

        redis_server.start()
        await wait_until_delivered(elsewhere, messages)  # the same subscription, live again
        await elsewhere.publish("c", "after")
        assert await received(messages, 1) == ["after"]
        async with broadcast.subscribe("new") as new:
            await elsewhere.publish("new", "fresh")
            assert await received(new, 1) == ["fresh"]
    assert "subscriber connection" in caplog.text


async def test_redis_down_at_startup_then_up(redis_server: RedisServer) -> None:
    redis_server.stop(signal.SIGKILL)
    async with running(redis_server) as broadcast:
        with pytest.raises(StoreUnavailable):
            await broadcast.publish("c", "x")
        redis_server.start()
        with trio.fail_after(10):
            while True:
                try:
                    async with broadcast.subscribe("c") as messages:
                        await wait_until_delivered(broadcast, messages)
                        break
                except StoreUnavailable:
                    await trio.sleep(0.05)


async def test_without_its_lifespan_a_redis_broadcast_says_so() -> None:
    broadcast = Broadcast(RedisStore("redis://127.0.0.1:1/0"))
    with pytest.raises(ConfigurationError, match=r"lifespan\(broadcast.lifespan\)"):
        await broadcast.publish("c", 1)
    with pytest.raises(ConfigurationError, match="lifespan"):
        async with broadcast.subscribe("c"):
            pass


async def test_one_lifespan_at_a_time(redis_server: RedisServer, nursery: trio.Nursery) -> None:
    broadcast = Broadcast(RedisStore(redis_server.url))
    async with broadcast.lifespan(nursery):
        with pytest.raises(ConfigurationError, match="running already"):
            async with broadcast.lifespan(nursery):
                pass
    with pytest.raises(ConfigurationError):  # exited: the broadcast is stopped
        await broadcast.publish("c", 1)


def test_a_broadcast_runs_again_in_another_trio_run(redis_server: RedisServer) -> None:
    broadcast = Broadcast(RedisStore(redis_server.url, timeout=TIMEOUT))

    async def once() -> None:
        async with trio.open_nursery() as nursery:
            async with broadcast.lifespan(nursery), broadcast.subscribe("c") as messages:
                await broadcast.publish("c", "hello")
                assert await received(messages, 1) == ["hello"]
            nursery.cancel_scope.cancel()

    for _ in range(2):
        trio.run(once)
