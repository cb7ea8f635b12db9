"""``examples/auth.py``: bearer token, API key and session cookie authentication."""

from __future__ import annotations

import pathlib
import runpy

import httpx

from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "auth.py"
CREDENTIALS = {"username": "ada", "password": "lovelace"}
SESSION_ATTRIBUTES = "Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Strict"
REMEMBER_ATTRIBUTES = "Path=/; Max-Age=2592000; Secure; HttpOnly; SameSite=Strict"
REMOVED = "Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT"


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


async def login(client: httpx.AsyncClient) -> str:
    response = await client.post("/login", json=CREDENTIALS)
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


def assert_401(response: httpx.Response, message: str) -> None:
    assert response.status_code == 401
    assert response.json() == {"status": 401, "error": "Unauthorized", "message": message}


# -- bearer ----------------------------------------------------------------------------------
async def test_bearer_token_missing_or_malformed_is_401_with_a_challenge() -> None:
    async with TestClient(load()) as client:
        for headers in (
            {},
            {"authorization": "Basic YWRhOmxvdmVsYWNl"},
            {"authorization": "Bearer"},
            {"authorization": "Token abc"},
        ):
            response = await client.get("/bearer/me", headers=headers)
            assert_401(response, "a bearer token is required")
            assert response.headers["www-authenticate"] == "Bearer"


async def test_unknown_bearer_token_is_401_invalid_token() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/bearer/me", headers={"authorization": "Bearer nope"})
        assert_401(response, "invalid bearer token")
        assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


async def test_the_login_token_is_a_valid_bearer_token() -> None:
    async with TestClient(load()) as client:
        token = await login(client)
        for scheme in ("Bearer", "bearer"):
            response = await client.get(
                "/bearer/me", headers={"authorization": f"{scheme} {token}"}
            )
            assert response.status_code == 200
            assert response.json() == {"username": "ada", "via": "bearer token"}
            assert "www-authenticate" not in response.headers


# -- API key ---------------------------------------------------------------------------------
async def test_api_key_missing_is_401() -> None:
    async with TestClient(load()) as client:
        assert_401(await client.get("/api-key/me"), "an x-api-key header is required")


async def test_api_key_wrong_is_401() -> None:
    async with TestClient(load()) as client:
        for key in ("wrong", "", "demo-api-key-but-longer"):
            response = await client.get("/api-key/me", headers={"x-api-key": key})
            assert_401(response, "invalid API key")


async def test_api_key_right_names_the_client_whatever_the_header_case() -> None:
    async with TestClient(load()) as client:
        for name in ("x-api-key", "X-API-Key"):
            response = await client.get("/api-key/me", headers={name: "demo-api-key"})
            assert response.status_code == 200
            assert response.json() == {"client": "demo client", "via": "api key"}


# -- login -----------------------------------------------------------------------------------
async def test_json_login_sets_a_protected_one_hour_session_cookie() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/login", json=CREDENTIALS)
        assert response.status_code == 200
        body = response.json()
        assert body["username"] == "ada"
        assert body["expires_in"] == 3600
        token = body["token"]
        assert isinstance(token, str) and len(token) >= 32
        assert response.headers.get_list("set-cookie") == [f"session={token}; {SESSION_ATTRIBUTES}"]


async def test_form_login_works_the_same() -> None:
    async with TestClient(load()) as client:
        response = await client.post("/login", data=CREDENTIALS)
        assert response.status_code == 200
        token = response.json()["token"]
        assert response.headers.get_list("set-cookie") == [f"session={token}; {SESSION_ATTRIBUTES}"]


async def test_each_login_gets_a_new_token() -> None:
    async with TestClient(load()) as client:
        assert await login(client) != await login(client)


async def test_remember_me_adds_a_30_day_cookie_from_json_or_form() -> None:
    async with TestClient(load()) as client:
        for request in (
            client.post("/login", json={**CREDENTIALS, "remember": True}),
            client.post("/login", data={**CREDENTIALS, "remember": "on"}),
        ):
            response = await request
            assert response.status_code == 200
            session, remember = response.headers.get_list("set-cookie")
            assert session == f"session={response.json()['token']}; {SESSION_ATTRIBUTES}"
            name, _, rest = remember.partition("=")
            value, _, attributes = rest.partition("; ")
            assert name == "remember_me"
            assert value and value != response.json()["token"]
            assert attributes == REMEMBER_ATTRIBUTES


async def test_remember_false_sets_only_the_session_cookie() -> None:
    async with TestClient(load()) as client:
        for request in (
            client.post("/login", json={**CREDENTIALS, "remember": False}),
            client.post("/login", data={**CREDENTIALS, "remember": "off"}),
        ):
            response = await request
            assert response.status_code == 200
            [cookie] = response.headers.get_list("set-cookie")
            assert cookie.startswith("session=")


async def test_wrong_credentials_are_401_without_a_cookie() -> None:
    async with TestClient(load()) as client:
        for credentials in (
            {"username": "ada", "password": "wrong"},
            {"username": "bob", "password": "lovelace"},
            {"username": "", "password": ""},
        ):
            for response in (
                await client.post("/login", json=credentials),
                await client.post("/login", data=credentials),
            ):
                assert_401(response, "wrong username or password")
                assert "set-cookie" not in response.headers


async def test_login_bodies_that_are_not_credentials() -> None:
    async with TestClient(load()) as client:
        plain = await client.post(
            "/login", content=b"ada:lovelace", headers={"content-type": "text/plain"}
        )
        assert plain.status_code == 415
        assert "application/json" in plain.json()["message"]
        assert (await client.post("/login")).status_code == 415
        broken = await client.post(
            "/login", content=b'{"username": ', headers={"content-type": "application/json"}
        )
        assert broken.status_code == 400
        missing_json = await client.post("/login", json={"username": "ada"})
        assert missing_json.status_code == 422
        assert missing_json.json()["errors"] == ["body.password: required"]
        missing_form = await client.post("/login", data={"username": "ada"})
        assert missing_form.status_code == 422
        assert missing_form.json()["errors"] == ["body.password: required"]
        bad_flag = await client.post("/login", data={**CREDENTIALS, "remember": "maybe"})
        assert bad_flag.status_code == 422


# -- the session -----------------------------------------------------------------------------
async def test_me_without_a_session_cookie_is_401() -> None:
    async with TestClient(load()) as client:
        assert_401(await client.get("/me"), "not logged in")
        made_up = await client.get("/me", headers={"cookie": "session=made-up"})
        assert_401(made_up, "not logged in")


async def test_me_reads_the_session_cookie() -> None:
    async with TestClient(load()) as client:
        token = await login(client)
        response = await client.get("/me", headers={"cookie": f"theme=dark; session={token}"})
        assert response.status_code == 200
        assert response.json() == {"username": "ada", "via": "session cookie"}


async def test_logout_removes_both_cookies_and_ends_the_session() -> None:
    async with TestClient(load()) as client:
        token = await login(client)
        cookie = {"cookie": f"session={token}"}
        response = await client.post("/logout", headers=cookie)
        assert response.status_code == 204
        assert response.headers.get_list("set-cookie") == [
            f"session=; {REMOVED}",
            f"remember_me=; {REMOVED}",
        ]
        assert_401(await client.get("/me", headers=cookie), "not logged in")
        bearer = await client.get("/bearer/me", headers={"authorization": f"Bearer {token}"})
        assert bearer.status_code == 401
        again = await client.post("/logout")
        assert again.status_code == 204


async def test_a_browser_like_cookie_jar_logs_in_and_out_over_https() -> None:
    # Secure cookies are only sent back over https, so the client uses an https base URL.
    async with TestClient(load(), base_url="https://testserver") as client:
        assert (await client.get("/me")).status_code == 401
        login_answer = await client.post("/login", json={**CREDENTIALS, "remember": True})
        assert client.cookies.get("session") == login_answer.json()["token"]
        assert client.cookies.get("remember_me")
        assert (await client.get("/me")).json()["username"] == "ada"
        assert (await client.post("/logout")).status_code == 204
        assert client.cookies.get("session") is None
        assert client.cookies.get("remember_me") is None
        assert (await client.get("/me")).status_code == 401


async def test_a_plain_http_client_does_not_send_the_secure_cookie_back() -> None:
    async with TestClient(load()) as client:
        await login(client)
        assert (await client.get("/me")).status_code == 401
