"""Type tests for the pages API: ``BackgroundTasks.add`` checks the arguments against the
function, ``Accept.best`` and ``Templates`` return what they say, and the stores and
``Broadcast`` are typed.

A ``# type: ignore[...]`` here marks an error mypy must report (unused ignores are errors)."""

from __future__ import annotations

from typing import Any, assert_type

from trioframe import (
    Accept,
    BackgroundTasks,
    Broadcast,
    MemoryStore,
    RedisStore,
    Response,
    Subscription,
    Templates,
)


async def send_mail(address: str, retries: int) -> None: ...


def background(tasks: BackgroundTasks) -> None:
    tasks.add(send_mail, "ada@example.org", 3)
    tasks.add(send_mail, "ada@example.org", "3")  # type: ignore[arg-type]
    tasks.add(send_mail, "ada@example.org")  # type: ignore[arg-type]


def negotiation(accept: Accept) -> None:
    assert_type(accept.best(["application/json", "text/html"]), str | None)


async def pages(templates: Templates) -> None:
    assert_type(await templates.response("page.html", {"title": "x"}), Response)
    assert_type(await templates.render("page.html"), str)


async def stores(broadcast: Broadcast) -> None:
    Broadcast(MemoryStore())
    Broadcast(RedisStore("redis://127.0.0.1:6379/0"))
    async with broadcast.subscribe("room") as messages:
        assert_type(messages, Subscription)
        assert_type(messages.dropped, int)
        async for message in messages:
            assert_type(message, Any)
