"""Server-side sessions, ``SessionMiddleware(store=...)``, in memory and in Redis: the cookie
holds only the sealed id, ``regenerate`` and ``clear`` delete the old id in the store (a
copied cookie stops working at once), the data expires with the session, and a store that
cannot answer is a 503."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from tests.app.helpers import assert_error_body
from trioframe import Json, MemoryStore, RedisStore, Router, Session
from trioframe._sessions.seal import Sealer
from trioframe.middleware import SessionMiddleware
from trioframe.testing import TestClient

from .redis_server import RedisServer

KEY = "k" * 32


async def whoami(session: Session) -> dict[str, Any]:
    return {"data": session.to_dict(), "id": session.id}


async def login(session: Session, values: Json[dict[str, Any]]) -> str:
    session.regenerate()
    session.update(values)
    return "ok"


async def put(session: Session, values: Json[dict[str, Any]]) -> str:
    session.update(values)
    return "ok"


async def logout(session: Session) -> str:
    session.clear()
    return "ok"


def app(store: MemoryStore | RedisStore, max_age: int = 3600) -> Router:
    middleware = SessionMiddleware([KEY], store=store, max_age=max_age)
    return (
        Router()
        .get("/", whoami)
        .post("/login", login)
        .post("/put", put)
        .post("/logout", logout)
        .middleware(middleware)
    )


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> MemoryStore | RedisStore:
    if request.param == "memory":
        return MemoryStore()
    server: RedisServer = request.getfixturevalue("redis_server")
    return RedisStore(server.url, prefix="app:")


async def with_cookie(client: TestClient, value: str) -> dict[str, Any]:
    """What the application sees for a request carrying only the session cookie ``value``."""
    client.cookies.clear()
    data: dict[str, Any] = (await client.get("/", headers={"cookie": f"session={value}"})).json()
    return data


async def test_the_cookie_holds_only_the_sealed_id(store: MemoryStore | RedisStore) -> None:
    with trio.fail_after(10):
        async with TestClient(app(store)) as client:
            await client.post("/login", json={"user": "ada", "note": "x" * 5000})
            cookie = client.cookies["session"]
            seen = (await client.get("/")).json()
    opened = Sealer([KEY], "session").open(cookie)
    assert opened is not None and opened.data == {}  # no data in the cookie
    assert opened.session_id == seen["id"] and len(seen["id"]) >= 22  # 128 random bits
    assert seen["data"]["user"] == "ada"  # 5000 bytes: more than a cookie could hold
    stored = await store.get(f"session:{seen['id']}")
    assert stored is not None and b'"user":"ada"' in stored


async def test_regenerate_deletes_the_old_id(store: MemoryStore | RedisStore) -> None:
    with trio.fail_after(10):
        async with TestClient(app(store)) as client:
            await client.post("/put", json={"cart": [1, 2]})
            before = client.cookies["session"]
            old_id = (await client.get("/")).json()["id"]
            await client.post("/login", json={"user": "ada"})
            after = client.cookies["session"]
            moved = (await client.get("/")).json()
            assert moved["data"] == {"cart": [1, 2], "user": "ada"} and moved["id"] != old_id
            assert await store.get(f"session:{old_id}") is None
            assert (await with_cookie(client, before))["data"] == {}  # the old cookie: empty
            assert (await with_cookie(client, after))["data"]["user"] == "ada"


async def test_logout_deletes_the_session_and_a_copied_cookie_stops_working(
    store: MemoryStore | RedisStore,
) -> None:
    with trio.fail_after(10):
        async with TestClient(app(store)) as client:
            await client.post("/login", json={"user": "ada"})
            copied = client.cookies["session"]
            session_id = (await client.get("/")).json()["id"]
            out = await client.post("/logout")
            assert (
                'session=""' in out.headers["set-cookie"]
                or "Max-Age=0" in out.headers["set-cookie"]
            )
            assert await store.get(f"session:{session_id}") is None
            replayed = await with_cookie(client, copied)
    assert replayed["data"] == {} and replayed["id"] != session_id  # never the old id again


async def test_memory_sessions_expire(autojump_clock: trio.testing.MockClock) -> None:
    store = MemoryStore()
    async with TestClient(app(store, max_age=60)) as client:
        await client.post("/login", json={"user": "ada"})
        await trio.sleep(59)
        assert (await client.get("/")).json()["data"] == {"user": "ada"}
        await trio.sleep(2)  # 61 s after the last change
        assert (await client.get("/")).json()["data"] == {}


async def test_redis_sessions_expire_with_a_ttl(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, prefix="app:")
    with trio.fail_after(10):
        async with TestClient(app(store, max_age=1)) as client:
            await client.post("/login", json={"user": "ada"})
            session_id = (await client.get("/")).json()["id"]
            ttl = await redis_server.command("PTTL", f"app:session:{session_id}")
            assert 0 < int(ttl.strip().lstrip(b":")) <= 1000
            await trio.sleep(1.2)
            assert await store.get(f"session:{session_id}") is None


async def test_an_unreachable_store_is_a_503(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, timeout=0.5)
    with trio.fail_after(10):
        async with TestClient(app(store)) as client:
            await client.post("/login", json={"user": "ada"})
            redis_server.stop()
            assert_error_body(await client.get("/"), 503, "store unavailable")
            redis_server.start()  # an empty server: the session is gone, nothing breaks
            await trio.sleep(1.1)
            assert (await client.get("/")).json()["data"] == {}


@pytest.mark.parametrize(("extra", "status"), [(-1, 200), (0, 200), (1, 500)])
async def test_session_data_is_bounded_by_max_size(
    extra: int, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemoryStore()
    limit = 1000
    overhead = len(b'{"note":""}')
    router = (
        Router()
        .get("/", whoami)
        .post("/put", put)
        .middleware(SessionMiddleware([KEY], store=store, max_size=limit))
    )
    async with TestClient(router) as client:
        response = await client.post("/put", json={"note": "x" * (limit - overhead + extra)})
        assert response.status_code == status
        kept = (await client.get("/")).json()["data"]
    if status == 500:
        assert_error_body(response, 500)
        assert kept == {}  # nothing was stored
        assert "over max_size 1000" in caplog.text
    else:
        assert len(kept["note"]) == limit - overhead + extra


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_max_size_is_a_positive_integer(size: Any) -> None:
    from trioframe import ConfigurationError

    with pytest.raises(ConfigurationError, match="max_size must be a positive number"):
        SessionMiddleware([KEY], store=MemoryStore(), max_size=size)
