"""``Broadcast`` over ``MemoryStore``: fan-out, order, the bounded queue of each subscriber
(drop the oldest, count what was dropped), kinds of messages, unsubscribing on exit."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trioframe import Broadcast, ConfigurationError, MemoryStore, Subscription


async def received(messages: Subscription, count: int) -> list[object]:
    """The next ``count`` messages (the test fails if they take more than a second)."""
    got = []
    with trio.fail_after(1):
        async for message in messages:
            got.append(message)
            if len(got) == count:
                break
    return got


async def test_every_subscriber_of_a_channel_gets_every_message_in_order() -> None:
    broadcast = Broadcast()
    async with (
        broadcast.subscribe("room") as first,
        broadcast.subscribe("room") as second,
        broadcast.subscribe("elsewhere") as other,
    ):
        for n in range(50):
            await broadcast.publish("room", n)
        assert await received(first, 50) == list(range(50))
        assert await received(second, 50) == list(range(50))
        assert other.pending == 0


async def test_the_default_store_is_memory() -> None:
    assert isinstance(Broadcast().store, MemoryStore)
    assert Broadcast().max_pending == 1000


@pytest.mark.parametrize("published", [4, 5, 6])
async def test_max_pending_keeps_the_newest_and_counts_the_dropped(published: int) -> None:
    # max_pending = 5, published = N-1, N, N+1: only past N is anything dropped, the oldest.
    broadcast = Broadcast(max_pending=5)
    async with broadcast.subscribe("c") as messages:
        for n in range(published):
            await broadcast.publish("c", n)
        assert messages.pending == min(published, 5)
        assert messages.dropped == max(0, published - 5)
        expected = list(range(published))[-5:]
        assert await received(messages, len(expected)) == expected
        await broadcast.publish("c", "after")
        assert await received(messages, 1) == ["after"]
        assert messages.dropped == max(0, published - 5)


async def test_dropped_keeps_counting_and_max_pending_per_subscription() -> None:
    broadcast = Broadcast(max_pending=100)
    async with broadcast.subscribe("c", max_pending=2) as messages:
        for n in range(10):
            await broadcast.publish("c", n)
        assert messages.dropped == 8
        assert await received(messages, 2) == [8, 9]
        for n in range(3):
            await broadcast.publish("c", n)
        assert messages.dropped == 9
        assert await received(messages, 2) == [1, 2]


async def test_a_slow_subscriber_slows_down_neither_a_fast_one_nor_the_publisher() -> None:
    broadcast = Broadcast(max_pending=10)
    fast_got: list[object] = []
    async with (
        trio.open_nursery() as nursery,
        broadcast.subscribe("c") as slow,
        broadcast.subscribe("c") as fast,
    ):

        async def read_fast() -> None:
            async for message in fast:
                fast_got.append(message)

        nursery.start_soon(read_fast)
        # The slow subscriber reads nothing at all; each publish still returns at once, and
        # the fast subscriber has every message before the next one is published.
        with trio.fail_after(5):
            for n in range(1000):
                await broadcast.publish("c", n)
                await trio.testing.wait_all_tasks_blocked()
                assert fast_got[-1] == n
        assert fast.dropped == 0
        assert slow.pending == 10
        assert slow.dropped == 990
        nursery.cancel_scope.cancel()


async def test_publishing_never_waits_even_with_a_full_queue() -> None:
    broadcast = Broadcast(max_pending=1)
    async with broadcast.subscribe("c") as messages:
        with trio.fail_after(1):
            for n in range(10_000):
                await broadcast.publish("c", n)
        assert messages.dropped == 9_999


@pytest.mark.parametrize(
    "message",
    ["text", "", "héllo ✓", b"\x00\xffbytes", b"", {"a": [1, 2.5, None, True]}, [1, "x"], 3, None],
)
async def test_each_message_arrives_as_the_kind_it_was_published_as(message: object) -> None:
    broadcast = Broadcast()
    async with broadcast.subscribe("c") as messages:
        await broadcast.publish("c", message)
        [got] = await received(messages, 1)
        assert got == message
        assert type(got) is type(message)


async def test_byte_like_messages_arrive_as_bytes_and_json_values_are_not_shared() -> None:
    broadcast = Broadcast()
    value = {"list": [1]}
    async with broadcast.subscribe("c") as first, broadcast.subscribe("c") as second:
        await broadcast.publish("c", bytearray(b"ab"))
        await broadcast.publish("c", value)
        value["list"].append(2)  # after publishing: subscribers see the message as published
        one, two = await received(first, 2), await received(second, 2)
        assert one == two == [b"ab", {"list": [1]}]
        assert type(one[0]) is bytes
        assert one[1] is not two[1]


async def test_what_is_not_json_is_refused_when_published() -> None:
    broadcast = Broadcast()
    with pytest.raises(TypeError):
        await broadcast.publish("c", object())
    with pytest.raises(ValueError):
        await broadcast.publish("c", float("nan"))


async def test_leaving_the_block_unsubscribes() -> None:
    broadcast = Broadcast()
    async with broadcast.subscribe("c") as messages:
        assert broadcast._fanout.channels() == {"c"}
    assert broadcast._fanout.channels() == set()
    await broadcast.publish("c", "nobody")
    assert messages.pending == 0
    with trio.fail_after(1):
        assert [m async for m in messages] == []  # the iteration has ended


async def test_a_reader_waiting_when_the_block_exits_is_let_go() -> None:
    broadcast = Broadcast()
    ended = trio.Event()
    async with trio.open_nursery() as nursery, broadcast.subscribe("c") as messages:

        async def read() -> None:
            async for _ in messages:
                pass
            ended.set()

        nursery.start_soon(read)
        await trio.testing.wait_all_tasks_blocked()
    with trio.fail_after(1):
        await ended.wait()


async def test_subscribers_that_come_later_do_not_get_earlier_messages() -> None:
    broadcast = Broadcast()
    await broadcast.publish("c", "before")
    async with broadcast.subscribe("c") as messages:
        await broadcast.publish("c", "after")
        assert await received(messages, 1) == ["after"]


async def test_the_memory_lifespan_needs_nothing(nursery: trio.Nursery) -> None:
    broadcast = Broadcast()
    async with broadcast.lifespan(nursery), broadcast.subscribe("c") as messages:
        await broadcast.publish("c", 1)
        assert await received(messages, 1) == [1]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_max_pending_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_pending"):
        Broadcast(max_pending=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="max_pending"):
        Broadcast().subscribe("c", max_pending=bad)  # type: ignore[arg-type]


def test_the_store_must_be_a_store() -> None:
    with pytest.raises(ConfigurationError, match="MemoryStore or a RedisStore"):
        Broadcast(store="redis://localhost")  # type: ignore[arg-type]


async def test_a_reader_cancelled_while_waiting_can_read_again() -> None:
    broadcast = Broadcast()
    async with broadcast.subscribe("c") as messages:
        with trio.move_on_after(0.01):
            await messages.__anext__()
        await broadcast.publish("c", "next")
        assert await received(messages, 1) == ["next"]
