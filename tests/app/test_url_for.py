"""``request.path_for`` and ``request.url_for`` in handlers and middleware, in memory; and
the round trip: every value ``path_for`` writes reaches its route as an equal value."""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from trioframe import Method, Next, Path, Request, Response, Router, ServerConfig, Uri, freeze
from trioframe._http.headers import Headers
from trioframe._request import BodyReader
from trioframe.testing import TestClient

from ..fuzz._settings import fuzz_settings


async def get_user(user_id: Path[int]) -> Response:
    return Response.text(f"user {user_id}")


async def links(request: Request) -> Response:
    return Response.json(
        {
            "path": request.path_for("users.get_user", user_id=7),
            "url": request.url_for("users.get_user", user_id=7),
        }
    )


ROUTER = (
    Router().get("/links", links).nest("/users", Router().get("/{user_id}", get_user), name="users")
)


async def test_a_handler_builds_paths_and_urls_that_reach_the_route() -> None:
    async with TestClient(ROUTER) as client:
        answer = (await client.get("/links")).json()
        assert answer == {"path": "/users/7", "url": "http://testserver/users/7"}
        reached = await client.get(answer["url"])
    assert reached.text == "user 7"


async def test_the_url_has_the_host_and_scheme_the_request_was_sent_to() -> None:
    async with TestClient(ROUTER, base_url="https://shop.example:8443", tls=True) as client:
        answer = (await client.get("/links")).json()
    assert answer["url"] == "https://shop.example:8443/users/7"


async def test_a_trusted_proxys_scheme_and_host_make_the_url() -> None:
    forwarded = {"x-forwarded-proto": "https", "x-forwarded-host": "shop.example"}
    config = ServerConfig(trusted_proxies=["10.0.0.0/8"])
    async with TestClient(ROUTER, config, client=("10.1.2.3", 4000)) as client:
        trusted = (await client.get("/links", headers=forwarded)).json()
    async with TestClient(ROUTER, client=("10.1.2.3", 4000)) as client:
        ignored = (await client.get("/links", headers=forwarded)).json()
    assert trusted["url"] == "https://shop.example/users/7"
    assert ignored["url"] == "http://testserver/users/7"


async def test_middleware_builds_paths_too_even_for_a_request_no_route_answers() -> None:
    async def redirect_home(request: Request, next: Next) -> Response:
        response = await next(request)
        if response.status == 404:
            return Response.redirect(request.path_for("users.get_user", user_id=1))
        return response

    router = Router().nest("/users", Router().get("/{user_id}", get_user), name="users")
    async with TestClient(router.middleware(redirect_home)) as client:
        answer = await client.get("/nowhere", follow_redirects=False)
    assert answer.status_code == 302 and answer.headers["location"] == "/users/1"


async def test_a_mistake_in_a_handler_is_a_500_like_any_bug() -> None:
    async def broken(request: Request) -> Response:
        return Response.text(request.path_for("no.such.route"))

    async with TestClient(Router().get("/", broken)) as client:
        assert (await client.get("/")).status_code == 500


def test_a_request_without_an_app_has_no_names() -> None:
    with pytest.raises(RuntimeError, match="not served by an app"):
        Request(method="GET", uri=Uri.parse("/")).path_for("anything")  # type: ignore[arg-type]


def test_url_for_needs_a_host() -> None:
    no_host = Request.served(  # an HTTP/1.0 request without Host
        Method.GET,
        Uri.parse("/"),
        "1.0",
        Headers(()),
        {},
        None,
        "http",
        BodyReader(),
        True,
        None,
        None,
        None,
        None,
        None,
        (),
        freeze(ROUTER).paths,
    )
    assert no_host.path_for("users.get_user", user_id=1) == "/users/1"
    with pytest.raises(ValueError) as caught:
        no_host.url_for("users.get_user", user_id=1)
    assert str(caught.value) == "url_for('users.get_user'): the request names no host; use path_for"


# -- the round trip ---------------------------------------------------------------------------
class Mood(enum.Enum):
    HAPPY = "happy"
    SLASHED = "a/b %"
    ONE = 1
    YES = True


#: Each type a path parameter can be read as, with the values to write.
KINDS: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "int": (int, st.integers()),
    "str": (str, st.text()),
    "uuid": (uuid.UUID, st.uuids()),
    "date": (datetime.date, st.dates()),
    "datetime": (
        datetime.datetime,
        st.datetimes(
            timezones=st.sampled_from(
                [None, datetime.UTC, datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))]
            )
        ),
    ),
    "time": (datetime.time, st.times()),
    "timedelta": (datetime.timedelta, st.timedeltas()),
    "enum": (Mood, st.sampled_from(Mood)),
    "bool": (bool, st.booleans()),
    "float": (float, st.floats(allow_nan=False, allow_infinity=False)),
    "decimal": (decimal.Decimal, st.decimals(allow_nan=False, allow_infinity=False)),
}


def _round_trip_router(seen: list[Any]) -> Router:
    router = Router()
    for label, (kind, _) in KINDS.items():
        router.get(f"/one/{label}/{{value}}", _recorder(kind, seen), name=label)
    router.get("/rest/{*value}", _recorder(str, seen), name="rest")
    return router


def _recorder(kind: Any, seen: list[Any]) -> Callable[..., Any]:
    async def record(value: Any) -> Response:
        seen.append(value)
        return Response.text("seen")

    record.__annotations__ = {"value": Path[kind], "return": Response}
    return record


def _writable(label: str, value: Any) -> bool:
    """What ``path_for`` refuses: text no path can carry so that it comes back whole."""
    if label not in ("str", "rest"):
        return True
    parts = value.split("/") if label == "rest" else [value]
    return bool(parts[0]) and "\x00" not in value and not {".", ".."} & set(parts)


async def _round_trip(label: str, values: list[Any]) -> None:
    seen: list[Any] = []
    router = _round_trip_router(seen)
    app = freeze(router)
    async with TestClient(router) as client:
        for value in values:
            if not _writable(label, value):
                with pytest.raises(ValueError):
                    app.path_for(label, value=value)
                continue
            path = app.path_for(label, value=value)
            assert (await client.get(path)).text == "seen", path
            assert seen.pop() == value, path


@pytest.mark.parametrize("label", [*KINDS, "rest"])
@fuzz_settings(40)
@given(data=st.data())
def test_every_written_value_reaches_its_route_equal(label: str, data: st.DataObject) -> None:
    strategy = KINDS["str"][1] if label == "rest" else KINDS[label][1]
    values = data.draw(st.lists(strategy, min_size=1, max_size=8))
    trio.run(_round_trip, label, values)
