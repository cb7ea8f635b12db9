"""``SessionMiddleware`` and ``Session``: round trip, tampering, expiry, key rotation, the
size cap at N-1/N/N+1, ``regenerate``, no cookie when nothing changed, ``Secure`` on https."""

from __future__ import annotations

import datetime
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from trioframe import ConfigurationError, Json, Response, Router, Session
from trioframe._sessions import seal as seal_module
from trioframe._sessions.seal import Sealer
from trioframe.middleware import SessionMiddleware
from trioframe.middleware.sessions import MAX_COOKIE_SIZE
from trioframe.testing import TestClient

KEY = "k" * 32
OLD_KEY = b"\x01" * 32
NEW_KEY = "a fresh key that is long enough!!"


async def show(session: Session) -> dict[str, Any]:
    return {"data": session.to_dict(), "id": session.id}


async def put(session: Session, values: Json[dict[str, Any]]) -> str:
    for name, value in values.items():
        session[name] = value
    return "ok"


async def forget(session: Session) -> str:
    session.clear()
    return "ok"


async def login(session: Session) -> str:
    session.regenerate()
    return "ok"


def app(**settings: Any) -> Router:
    keys = settings.pop("secret_keys", [KEY])
    return (
        Router()
        .get("/show", show)
        .post("/put", put)
        .post("/forget", forget)
        .post("/login", login)
        .middleware(SessionMiddleware(keys, **settings))
    )


@pytest.fixture
async def client() -> AsyncIterator[TestClient]:
    async with TestClient(app()) as client:
        yield client


def set_cookie(response: httpx.Response) -> str | None:
    return response.headers.get("set-cookie")


async def test_round_trip_and_cookie_attributes(client: TestClient) -> None:
    first = await client.get("/show")
    assert first.json()["data"] == {} and set_cookie(first) is None  # nothing changed
    saved = await client.post("/put", json={"user": "ada", "roles": ["admin"]})
    header = set_cookie(saved)
    assert header is not None
    assert header.startswith("session=")
    for attribute in ("HttpOnly", "Path=/", "SameSite=Lax", f"Max-Age={14 * 24 * 3600}"):
        assert attribute in header
    assert "Secure" not in header  # plain http
    assert "ada" not in header  # encrypted, not just signed
    again = await client.get("/show")
    assert again.json()["data"] == {"user": "ada", "roles": ["admin"]}
    assert set_cookie(again) is None  # read, not changed: not saved


async def test_an_emptied_session_removes_the_cookie(client: TestClient) -> None:
    await client.post("/put", json={"user": "ada"})
    response = await client.post("/forget")
    header = set_cookie(response) or ""
    assert header.startswith("session=") and "Max-Age=0" in header
    assert (await client.get("/show")).json()["data"] == {}


@pytest.mark.parametrize(
    "mangle",
    [
        lambda value: value[:-2] + ("A" if value[-2] != "A" else "B") + value[-1],  # a tag bit
        lambda value: value[:10] + ("A" if value[10] != "A" else "B") + value[11:],  # the nonce
        lambda value: value[:-20],  # truncated
        lambda value: "not base64 at all!",
        lambda value: "",
        lambda value: value * 3,  # too long to be ours
    ],
)
async def test_a_tampered_cookie_is_an_empty_session_never_an_error(mangle: Any) -> None:
    async with TestClient(app()) as client:
        saved = await client.post("/put", json={"user": "ada"})
        value = saved.cookies["session"]
        client.cookies.clear()
        client.cookies.set("session", mangle(value))
        response = await client.get("/show")
        assert response.status_code == 200 and response.json()["data"] == {}


async def test_a_value_moved_to_another_cookie_name_does_not_open() -> None:
    sealer = Sealer([KEY], "session")
    value = sealer.seal("id", {"user": "ada"}, 60)
    assert sealer.open(value) is not None
    assert Sealer([KEY], "other").open(value) is None


async def test_expiry_is_sealed_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    async with TestClient(app(max_age=datetime.timedelta(minutes=5))) as client:
        saved = await client.post("/put", json={"user": "ada"})
        assert "Max-Age=300" in (set_cookie(saved) or "")
        now = seal_module.time.time()
        monkeypatch.setattr(seal_module.time, "time", lambda: now + 299)
        assert (await client.get("/show")).json()["data"] == {"user": "ada"}
        monkeypatch.setattr(seal_module.time, "time", lambda: now + 301)
        expired = await client.get("/show")
        assert expired.json()["data"] == {}


async def test_key_rotation() -> None:
    async with TestClient(app(secret_keys=[OLD_KEY])) as old:
        value = (await old.post("/put", json={"user": "ada"})).cookies["session"]
    async with TestClient(app(secret_keys=[NEW_KEY, OLD_KEY])) as rotated:
        rotated.cookies.set("session", value)
        response = await rotated.get("/show")
        assert response.json()["data"] == {"user": "ada"}  # every key opens
        resealed = response.cookies.get("session")  # opened with an old key: sealed again
        assert resealed is not None and resealed != value
    assert Sealer([NEW_KEY], "session").open(resealed) is not None  # the first key sealed it
    async with TestClient(app(secret_keys=[NEW_KEY])) as new_only:
        new_only.cookies.set("session", value)
        dropped = await new_only.get("/show")
        assert dropped.json()["data"] == {}  # the old key is gone: an empty session


async def test_regenerate_gives_a_new_id_and_cookie(client: TestClient) -> None:
    await client.post("/put", json={"user": "ada"})
    before = (await client.get("/show")).json()["id"]
    response = await client.post("/login")
    assert set_cookie(response) is not None
    after = (await client.get("/show")).json()
    assert after["id"] != before and after["data"] == {"user": "ada"}


# A base64 value (unpadded) is never 1 more than a multiple of 4 long: with a 4-character
# cookie name, 4095, 4096 and 4097 are all sizes a cookie can have.
NAME = "auth"


def _sealed_size(data: dict[str, str]) -> int:
    return len(NAME) + 1 + len(Sealer([KEY], NAME).seal("i" * 22, data, 60))


def _data_of_cookie_size(size: int) -> dict[str, str]:
    """Data whose sealed ``auth=<value>`` is exactly ``size`` bytes."""
    for length in range(size):
        data = {"x": "a" * length}
        if _sealed_size(data) == size:
            return data
    raise AssertionError(f"no data seals to {size} bytes")


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_the_cookie_size_cap(delta: int, caplog: pytest.LogCaptureFixture) -> None:
    data = _data_of_cookie_size(MAX_COOKIE_SIZE + delta)
    async with TestClient(app(cookie_name=NAME)) as client:
        response = await client.post("/put", json=data)
    if delta <= 0:
        assert response.status_code == 200
        assert (set_cookie(response) or "").startswith(NAME + "=")
        assert len(response.cookies[NAME]) + len(NAME) + 1 == MAX_COOKIE_SIZE + delta
    else:
        assert response.status_code == 500 and set_cookie(response) is None
        assert response.json()["status"] == 500
        assert any(
            "session cookie" in r.getMessage() and r.levelno == logging.ERROR
            for r in caplog.records
        )


@pytest.mark.parametrize(
    ("tls", "secure", "expected"),
    [(True, None, True), (False, None, False), (False, True, True), (True, False, False)],
)
async def test_secure_on_https(tls: bool, secure: bool | None, expected: bool) -> None:
    async with TestClient(app(secure=secure), tls=tls) as client:
        header = set_cookie(await client.post("/put", json={"a": 1})) or ""
    assert ("Secure" in header) is expected


async def test_session_without_the_middleware_is_a_500() -> None:
    async with TestClient(Router().get("/show", show)) as client:
        response = await client.get("/show")
    assert response.status_code == 500


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([], "non-empty list"),
        (KEY, "non-empty list"),
        (["short"], "at least 32 characters"),
        ([b"\x00" * 31], "at least 32 bytes"),
        ([KEY, b"x" * 31], "at least 32 bytes"),
        ([42], "bytes or str"),
    ],
)
def test_bad_keys_are_configuration_errors(keys: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        SessionMiddleware(keys)


async def test_json_values_only() -> None:
    async def bad(session: Session) -> Response:
        session["when"] = datetime.datetime.now()
        return Response(200)

    router = Router().get("/bad", bad).middleware(SessionMiddleware([KEY]))
    async with TestClient(router) as client:
        assert (await client.get("/bad")).status_code == 500


def test_without_cryptography_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'trioframe\[sessions\]'"):
        SessionMiddleware([KEY])
