"""Cookies end to end: ``Response.add_cookie`` on the wire, httpx's cookie jar sending them
back, and ``Request.cookies()``/``cookie()`` reading them inside real handlers."""

from __future__ import annotations

import pytest

from trioframe import Cookie, CookieJar, Request, Response, Router, SameSite
from trioframe.testing import TestClient

# -- Response.add_cookie (no server) ---------------------------------------------------------------


def test_add_cookie_appends_one_header_per_cookie_and_returns_the_response() -> None:
    response = Response.text("hi").with_header("set-cookie", "early=1")
    result = response.add_cookie(Cookie("a", "1")).add_cookie(Cookie("b", "2").http_only())
    assert result is response
    assert [v for k, v in response.headers if k == b"set-cookie"] == [
        b"early=1",
        b"a=1",
        b"b=2; HttpOnly",
    ]


def test_add_cookie_propagates_render_errors_and_adds_nothing() -> None:
    response = Response.new(204)
    with pytest.raises(ValueError, match="SameSite=None"):
        response.add_cookie(Cookie("a", "1").same_site(SameSite.NONE))
    with pytest.raises(ValueError, match="partitioned"):
        response.add_cookie(Cookie("a", "1").partitioned())
    assert response.headers == []


# -- through the TestClient --------------------------------------------------------------------------


async def login(request: Request) -> Response:
    return (
        Response.text("welcome")
        .add_cookie(Cookie("session", "abc123").http_only().path("/").same_site(SameSite.LAX))
        .add_cookie(Cookie("theme", "dark").path("/").max_age(3600))
    )


async def logout(request: Request) -> Response:
    return Response.new(204).add_cookie(Cookie.removal("session"))


async def whoami(request: Request) -> Response:
    jar = request.cookies()
    assert isinstance(jar, CookieJar)
    assert request.cookies() is jar  # parsed once per request
    return Response.json(
        {
            "session": request.cookie("session"),
            "theme": request.cookie("theme"),
            "missing": request.cookie("missing"),
            "count": len(jar),
            "names": sorted(jar),
            "has_session": "session" in jar and jar.contains("session"),
        }
    )


async def echo(request: Request) -> Response:
    return Response.json(request.cookies())


async def broken(request: Request) -> Response:
    return Response.text("x").add_cookie(Cookie("a", "1").same_site(SameSite.NONE))


def app() -> Router:
    return (
        Router()
        .post("/login", login)
        .post("/logout", logout)
        .get("/whoami", whoami)
        .get("/echo", echo)
        .get("/broken", broken)
    )


async def test_two_cookies_give_two_set_cookie_headers() -> None:
    async with TestClient(app()) as client:
        response = await client.post("/login")
    assert response.status_code == 200
    assert response.headers.get_list("set-cookie") == [
        "session=abc123; Path=/; HttpOnly; SameSite=Lax",
        "theme=dark; Path=/; Max-Age=3600",
    ]


async def test_client_jar_sends_cookies_back_and_handlers_read_them() -> None:
    async with TestClient(app()) as client:
        anonymous = await client.get("/whoami")
        assert anonymous.json() == {
            "session": None,
            "theme": None,
            "missing": None,
            "count": 0,
            "names": [],
            "has_session": False,
        }
        await client.post("/login")
        assert client.cookies.get("session") == "abc123"
        response = await client.get("/whoami")
    assert response.json() == {
        "session": "abc123",
        "theme": "dark",
        "missing": None,
        "count": 2,
        "names": ["session", "theme"],
        "has_session": True,
    }


async def test_removal_cookie_deletes_it_from_the_client_jar() -> None:
    async with TestClient(app()) as client:
        await client.post("/login")
        response = await client.post("/logout")
        assert response.headers["set-cookie"] == (
            "session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT"
        )
        assert "session" not in client.cookies
        seen = await client.get("/echo")
    assert seen.json() == {"theme": "dark"}


async def test_response_json_of_the_jar() -> None:
    async with TestClient(app()) as client:
        await client.post("/login")
        response = await client.get("/echo")
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"session": "abc123", "theme": "dark"}


async def test_every_cookie_header_is_read() -> None:
    headers = [("cookie", 'a=1; b="two"'), ("cookie", "c=3; a=ignored")]
    async with TestClient(app()) as client:
        response = await client.get("/echo", headers=headers)
    assert response.json() == {"a": "1", "b": "two", "c": "3"}


async def test_utf8_cookie_values_are_decoded() -> None:
    async with TestClient(app()) as client:
        response = await client.get("/echo", headers=[(b"cookie", "name=caf\u00e9".encode())])
        latin1 = await client.get("/echo", headers=[(b"cookie", b"name=caf\xe9")])
    assert response.json() == {"name": "caf\u00e9"}
    assert latin1.json() == {"name": "caf\u00e9"}


async def test_no_cookie_header_gives_an_empty_jar() -> None:
    async with TestClient(app()) as client:
        response = await client.get("/echo")
    assert response.json() == {}


async def test_an_invalid_cookie_in_a_handler_is_a_500() -> None:
    async with TestClient(app()) as client:
        response = await client.get("/broken")
    assert response.status_code == 500
    assert "set-cookie" not in response.headers


async def test_secure_cookies_round_trip_over_https() -> None:
    async def set_secure(request: Request) -> Response:
        cookie = Cookie("__Host-sid", "xyz").secure().http_only().path("/")
        return Response.new(204).add_cookie(cookie.same_site(SameSite.STRICT))

    router = Router().post("/set", set_secure).get("/echo", echo)
    async with TestClient(router, base_url="https://testserver") as client:
        await client.post("/set")
        response = await client.get("/echo")
    assert response.json() == {"__Host-sid": "xyz"}


async def test_a_host_cookie_is_removed_from_the_client_jar() -> None:
    async def set_secure(request: Request) -> Response:
        return Response.new(204).add_cookie(Cookie("__Host-sid", "xyz").secure().path("/"))

    async def log_out(request: Request) -> Response:
        return Response.new(204).add_cookie(Cookie.removal("__Host-sid"))

    router = Router().post("/set", set_secure).post("/logout", log_out).get("/echo", echo)
    async with TestClient(router, base_url="https://testserver") as client:
        await client.post("/set")
        assert client.cookies.get("__Host-sid") == "xyz"
        response = await client.post("/logout")
        assert response.status_code == 204
        assert response.headers["set-cookie"] == (
            "__Host-sid=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure"
        )
        assert "__Host-sid" not in client.cookies
        seen = await client.get("/echo")
    assert seen.json() == {}
