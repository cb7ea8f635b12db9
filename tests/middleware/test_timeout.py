"""TimeoutMiddleware: 503 exactly at the deadline, the handler cancelled."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from tests.app.helpers import assert_error_body
from trioframe import ConfigurationError, Request, Response, Router
from trioframe._chain import Next
from trioframe.middleware import TimeoutMiddleware
from trioframe.testing import TestClient


async def test_slow_handler_gets_503_at_the_deadline_and_sees_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[str] = []

    async def slow() -> Response:
        try:
            await trio.sleep(10)
        except trio.Cancelled:
            seen.append("cancelled")
            raise
        return Response.text("late")

    app = Router().middleware(TimeoutMiddleware(2.5)).get("/", slow)
    async with TestClient(app) as client:
        start = trio.current_time()
        response = await client.get("/")
        assert trio.current_time() - start == 2.5
    assert_error_body(response, 503, "the request took longer than 2.5 s")
    assert seen == ["cancelled"]


async def test_a_handler_within_the_deadline_is_answered_normally(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def quick() -> Response:
        await trio.sleep(0.999)
        return Response.text("in time")

    async with TestClient(Router().middleware(TimeoutMiddleware(1)).get("/", quick)) as client:
        response = await client.get("/")
    assert response.status_code == 200 and response.text == "in time"


async def test_an_outer_cancellation_passes_through(
    autojump_clock: trio.testing.MockClock,
) -> None:
    outcome: list[str] = []

    async def outer(request: Request, next: Next) -> Response:
        with trio.move_on_after(1):
            return await next(request)
        outcome.append("outer deadline")
        return Response.text("outer", 504)

    async def slow() -> Response:
        await trio.sleep(10)
        return Response.text("late")

    app = Router().middleware(outer).middleware(TimeoutMiddleware(5)).get("/", slow)
    async with TestClient(app) as client:
        response = await client.get("/")
    assert response.status_code == 504 and outcome == ["outer deadline"]


@pytest.mark.parametrize("seconds", [0, -1, math.inf, math.nan, "1", True])
def test_invalid_seconds_are_refused(seconds: object) -> None:
    with pytest.raises(ConfigurationError):
        TimeoutMiddleware(seconds)  # type: ignore[arg-type]
