"""RateLimitMiddleware: token bucket per key, 429 with Retry-After, bounded memory."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.app.helpers import assert_error_body
from trioframe import ConfigurationError, Request, Response, Router
from trioframe.middleware import RateLimitMiddleware
from trioframe.testing import TestClient

handled: list[str] = []


async def hello() -> Response:
    handled.append("hello")
    return Response.text("hi")


def by_header(request: Request) -> str | None:
    return request.header("x-key")


async def test_n_allowed_then_429_then_allowed_after_refill(
    autojump_clock: trio.testing.MockClock,
) -> None:
    handled.clear()
    limiter = RateLimitMiddleware(3, per_seconds=6)  # a token every 2 s
    async with TestClient(Router().middleware(limiter).get("/", hello)) as client:
        allowed = [await client.get("/") for _ in range(3)]
        refused = await client.get("/")
        assert handled == ["hello"] * 3  # a refused request never reaches the handler
        await trio.sleep(1.9)
        still = await client.get("/")
        await trio.sleep(0.1)  # 2 s since the bucket ran dry: one token back
        again = await client.get("/")
        after = await client.get("/")
    assert [r.status_code for r in allowed] == [200, 200, 200]
    assert [r.headers["ratelimit-remaining"] for r in allowed] == ["2", "1", "0"]
    assert [r.headers["ratelimit-reset"] for r in allowed] == ["2", "4", "6"]
    assert all(r.headers["ratelimit-limit"] == "3" for r in allowed)
    assert_error_body(refused, 429, "rate limit exceeded")
    assert refused.headers["retry-after"] == "2"
    assert refused.headers["ratelimit-remaining"] == "0"
    assert still.status_code == 429 and still.headers["retry-after"] == "1"  # 0.1 s, rounded up
    assert again.status_code == 200 and after.status_code == 429
    assert len(handled) == 4


async def test_retry_after_rounds_up_to_whole_seconds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = RateLimitMiddleware(1, per_seconds=2.5)
    async with TestClient(Router().middleware(limiter).get("/", hello)) as client:
        assert (await client.get("/")).status_code == 200
        refused = await client.get("/")
    assert refused.headers["retry-after"] == "3"
    assert refused.headers["ratelimit-reset"] == "3"


async def test_each_client_has_its_own_bucket(autojump_clock: trio.testing.MockClock) -> None:
    limiter = RateLimitMiddleware(1, per_seconds=60)
    router = Router().middleware(limiter).get("/", hello)
    async with TestClient(router, client=("10.0.0.1", 1000)) as first:
        assert (await first.get("/")).status_code == 200
        assert (await first.get("/")).status_code == 429
    async with TestClient(router, client=("10.0.0.2", 1000)) as second:
        assert (await second.get("/")).status_code == 200
    async with TestClient(router, client=("10.0.0.1", 2000)) as same_host:
        assert (await same_host.get("/")).status_code == 429  # the key is the host


async def test_custom_key_and_none_exempts(autojump_clock: trio.testing.MockClock) -> None:
    limiter = RateLimitMiddleware(1, per_seconds=60, key=by_header)
    async with TestClient(Router().middleware(limiter).get("/", hello)) as client:
        assert (await client.get("/", headers={"x-key": "a"})).status_code == 200
        assert (await client.get("/", headers={"x-key": "a"})).status_code == 429
        assert (await client.get("/", headers={"x-key": "b"})).status_code == 200
        for _ in range(5):
            exempt = await client.get("/")
            assert exempt.status_code == 200 and "ratelimit-limit" not in exempt.headers


async def test_memory_is_bounded_and_least_recently_used_is_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = RateLimitMiddleware(1, per_seconds=60, key=by_header, max_keys=3)
    async with TestClient(Router().middleware(limiter).get("/", hello)) as client:

        async def status(key: str) -> int:
            code = (await client.get("/", headers={"x-key": key})).status_code
            assert limiter.tracked_keys <= 3
            return code

        assert [await status(k) for k in "abc"] == [200, 200, 200]
        assert await status("a") == 429  # "a" becomes the most recently used
        assert await status("d") == 200  # evicts "b", the least recently used
        assert await status("a") == 429  # still tracked, still empty
        assert await status("b") == 200  # dropped: a fresh bucket (evicts "c")
        for key in "efghij":
            await status(key)
        assert limiter.tracked_keys == 3
        assert await status("j") == 429


async def test_headers_are_on_error_responses_too(autojump_clock: trio.testing.MockClock) -> None:
    limiter = RateLimitMiddleware(5, per_seconds=5)
    async with TestClient(Router().middleware(limiter).get("/", hello)) as client:
        missing = await client.get("/missing")
    assert missing.status_code == 404 and missing.headers["ratelimit-remaining"] == "4"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((0, 1), {}),
        ((1.5, 1), {}),
        ((True, 1), {}),
        ((1, 0), {}),
        ((1, -1), {}),
        ((1, 1), {"max_keys": 0}),
    ],
)
def test_invalid_settings_are_refused(args: tuple[object, object], kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError):
        RateLimitMiddleware(*args, **kwargs)  # type: ignore[arg-type]
