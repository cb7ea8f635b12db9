"""Single values: ``Query[T]`` of a scalar or a list, ``HeaderValue[T]``, ``CookieValue[T]``,
``Alias``, and what ``ParamInfo`` says of them."""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid
from typing import Annotated, Any, Literal, Self

import attrs
import pytest

from trioframe import (
    Alias,
    ConfigurationError,
    CookieValue,
    Error,
    FromRequest,
    HeaderValue,
    Json,
    ParamInfo,
    Query,
    Request,
    Response,
    Router,
    freeze,
)
from trioframe._extract.plan import build_plan
from trioframe.testing import TestClient


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@attrs.frozen
class Item:
    name: str


def _failure(handler: Any, **route: Any) -> str:
    with pytest.raises(ConfigurationError) as info:
        build_plan(handler, **route)
    prefix = f"handler {handler.__module__}.{handler.__qualname__}, "
    message = str(info.value)
    assert message.startswith(prefix)
    return message.removeprefix(prefix)


# -- Query[T] of one key ---------------------------------------------------------------------
async def test_a_scalar_query_reads_the_key_named_like_the_parameter() -> None:
    async def listing(page: Query[int] = 1, q: Query[str | None] = None) -> Response:
        return Response.json([page, q])

    async with TestClient(Router().get("/", listing)) as client:
        assert (await client.get("/")).json() == [1, None]
        assert (await client.get("/?page=3&q=x")).json() == [3, "x"]
        assert (await client.get("/?page=3&page=4")).json() == [4, None]  # the last value
        assert (await client.get("/?q=")).json() == [1, ""]
        other = await client.get("/?pages=3&Page=5")  # exact names only
        assert other.json() == [1, None]


async def test_a_query_key_without_a_default_is_required() -> None:
    async def need(page: Query[int], q: Query[str | None]) -> Response:
        return Response.json([page, q])

    async with TestClient(Router().get("/", need)) as client:
        missing = await client.get("/")
        assert missing.status_code == 400
        assert missing.json()["message"] == "invalid query parameters"
        assert missing.json()["errors"] == ["query.page: required"]
        assert (await client.get("/?page=2")).json() == [2, None]  # X | None: None


async def test_a_bad_query_value_is_a_400_saying_why() -> None:
    async def listing(
        page: Query[int] = 1, ratio: Query[float] = 1.0, color: Query[Color] = Color.RED
    ) -> Response:
        return Response.json([page, ratio, color])

    async with TestClient(Router().get("/", listing)) as client:
        for target, error in [
            ("/?page=x", "query.page: expected an integer"),
            ("/?page=", "query.page: expected an integer"),  # present: not the default
            ("/?ratio=1e999", "query.ratio: expected a finite number"),
            ("/?color=blue", "query.color: expected one of 'red', 'green'"),
        ]:
            response = await client.get(target)
            assert response.status_code == 400, target
            assert response.json()["errors"] == [error]
        assert (await client.get("/?page=%zz")).status_code == 400  # undecodable


async def test_every_text_value_type_reads_from_one_key() -> None:
    async def values(
        amount: Query[decimal.Decimal],
        ident: Query[uuid.UUID],
        day: Query[datetime.date],
        at: Query[datetime.datetime],
        wait: Query[datetime.timedelta],
        flag: Query[bool],
        mode: Query[Literal["fast", "slow"]],
        raw: Query[Any],
    ) -> Response:
        return Response.json([amount, ident, day, at, wait, flag, mode, raw])

    target = (
        "/?amount=12.50&ident=3f2504e0-4f89-41d3-9a0c-0305e82c3301&day=2024-05-01"
        "&at=2024-05-01T12:30Z&wait=PT1M&flag=yes&mode=slow&raw=as+is"
    )
    async with TestClient(Router().get("/", values)) as client:
        assert (await client.get(target)).json() == [
            "12.50",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "2024-05-01",
            "2024-05-01T12:30:00+00:00",
            "PT1M",
            True,
            "slow",
            "as is",
        ]


async def test_a_list_reads_every_value_of_the_key() -> None:
    async def tagged(
        tags: Query[list[int]],
        kinds: Query[frozenset[str]] = frozenset(),
        extra: Query[list[str] | None] = None,
        rest: Query[tuple[str, ...]] = (),
    ) -> Response:
        return Response.json([tags, sorted(kinds), extra, rest])

    async with TestClient(Router().get("/", tagged)) as client:
        both = await client.get("/?tags=1&kinds=b&tags=2&kinds=a&kinds=b&rest=x")
        assert both.json() == [[1, 2], ["a", "b"], None, ["x"]]
        assert (await client.get("/?tags=3&extra=e")).json() == [[3], [], ["e"], []]
        missing = await client.get("/")
        assert missing.status_code == 400
        assert missing.json()["errors"] == ["query.tags: required"]
        bad = await client.get("/?tags=1&tags=b")
        assert bad.json()["errors"] == ["query.tags[1]: expected an integer"]


async def test_a_mutable_default_is_copied_for_each_request() -> None:
    async def appending(
        tags: Query[list[str]] = [],  # noqa: B006
        x_seen: HeaderValue[list[str]] = [],  # noqa: B006
    ) -> Response:
        tags.append("mine")
        x_seen.append("mine")
        return Response.json([tags, x_seen])

    async with TestClient(Router().get("/", appending)) as client:
        for _ in range(2):
            assert (await client.get("/")).json() == [["mine"], ["mine"]]


async def test_records_and_mappings_still_read_the_whole_query() -> None:
    async def whole(item: Query[Item], raw: Query[dict[str, str]]) -> Response:
        return Response.json([item.name, raw])

    async with TestClient(Router().get("/", whole)) as client:
        assert (await client.get("/?name=n&x=1")).json() == ["n", {"name": "n", "x": "1"}]
    info = freeze(Router().get("/", whole)).routes[0].params
    assert info == (ParamInfo("query", "item", Item), ParamInfo("query", "raw", dict[str, str]))


async def test_a_single_value_may_hand_its_error_to_the_handler() -> None:
    async def lenient(page: Query[int] | Error) -> Response:
        if isinstance(page, Error):
            return Response.json({"status": page.status, "errors": page.errors})
        return Response.json(page)

    async with TestClient(Router().get("/", lenient)) as client:
        assert (await client.get("/?page=2")).json() == 2
        assert (await client.get("/")).json() == {"status": 400, "errors": ["query.page: required"]}


# -- Alias -------------------------------------------------------------------------------------
async def test_an_alias_names_the_key_in_either_spelling() -> None:
    async def sized(
        size: Annotated[Query[int], Alias("page-size")] = 20,
        tags: Annotated[Query[list[str]], Alias("tag")] = [],  # noqa: B006
        inner: Query[Annotated[int, Alias("n")]] = 0,
    ) -> Response:
        return Response.json([size, tags, inner])

    async with TestClient(Router().get("/", sized)) as client:
        assert (await client.get("/?page-size=5&tag=a&tag=b&n=7")).json() == [5, ["a", "b"], 7]
        assert (await client.get("/?size=5&inner=7")).json() == [20, [], 0]
        bad = await client.get("/?page-size=big")
        assert bad.json()["errors"] == ["query.page-size: expected an integer"]


def test_an_alias_where_it_names_nothing_is_refused() -> None:
    async def on_json(item: Annotated[Json[Item], Alias("x")]) -> Response:
        return Response.text("")

    async def on_record(item: Annotated[Query[Item], Alias("x")]) -> Response:
        return Response.text("")

    async def nested(n: Query[Annotated[int, Alias("x")] | None] = None) -> Response:
        return Response.text("")

    tail = ": Alias names one query key, header or cookie (a Query[T] of a value, "
    tail += "HeaderValue[T], CookieValue[T])"
    assert _failure(on_json) == "parameter 'item': Json[Item]" + tail
    assert _failure(on_record) == "parameter 'item': Query[Item]" + tail
    assert _failure(nested) == (
        "parameter 'n': Query[Optional[Annotated[int, Alias(name='x')]]]: an Alias inside the "
        "type names nothing; write Annotated[Query[...], Alias(...)]"
    )
    with pytest.raises(ValueError, match="cannot be empty"):
        Alias("")


# -- HeaderValue[T] ----------------------------------------------------------------------------
async def test_a_header_value_is_named_like_the_parameter_with_dashes() -> None:
    async def tokens(
        x_token: HeaderValue[str],
        x_count: HeaderValue[int] = 0,
        forwarded: Annotated[HeaderValue[list[str]], Alias("X-Forwarded-For")] = [],  # noqa: B006
        agent: Annotated[HeaderValue[str | None], Alias("User-Agent")] = None,
    ) -> Response:
        return Response.json([x_token, x_count, forwarded, agent])

    async with TestClient(Router().get("/", tokens)) as client:
        headers = [
            ("X-TOKEN", "a"),
            ("x-token", "b"),
            ("X-Count", "3"),
            ("x-forwarded-for", "1.1.1.1"),
            ("X-Forwarded-For", "2.2.2.2, 3.3.3.3"),
        ]
        response = await client.get("/", headers=headers)
        agent = response.json()[3]
        assert response.json() == [
            "a",  # a repeated header: the first value
            3,
            ["1.1.1.1", "2.2.2.2, 3.3.3.3"],  # every field line, as sent
            agent,
        ]
        assert agent is not None and agent.startswith("python-httpx")
        missing = await client.get("/")
        assert missing.status_code == 400
        assert missing.json()["message"] == "invalid headers"
        assert missing.json()["errors"] == ["header.x-token: required"]
        bad = await client.get("/", headers={"x-token": "t", "x-count": "many"})
        assert bad.json()["errors"] == ["header.x-count: expected an integer"]


def test_a_header_alias_must_be_a_header_name() -> None:
    async def spaced(v: Annotated[HeaderValue[str], Alias("x token")]) -> Response:
        return Response.text(v)

    assert _failure(spaced) == "parameter 'v': HeaderValue[str]: 'x token' is not a header name"


# -- CookieValue[T] ----------------------------------------------------------------------------
async def test_a_cookie_value_is_named_like_the_parameter() -> None:
    async def session(
        session_id: CookieValue[str],
        visits: CookieValue[int] = 0,
        theme: Annotated[CookieValue[str | None], Alias("ui-theme")] = None,
    ) -> Response:
        return Response.json([session_id, visits, theme])

    async with TestClient(Router().get("/", session)) as client:
        sent = {"cookie": "session_id=abc; visits=4; ui-theme=dark"}
        assert (await client.get("/", headers=sent)).json() == ["abc", 4, "dark"]
        assert (await client.get("/", headers={"cookie": "session_id=s"})).json() == [
            "s",
            0,
            None,
        ]
        missing = await client.get("/", headers={"cookie": "other=1"})
        assert missing.status_code == 400
        assert missing.json()["message"] == "invalid cookies"
        assert missing.json()["errors"] == ["cookie.session_id: required"]
        bad = await client.get("/", headers={"cookie": "session_id=s; visits=x"})
        assert bad.json()["errors"] == ["cookie.visits: expected an integer"]


def test_a_list_of_cookies_is_refused() -> None:
    async def many(ids: CookieValue[list[str]]) -> Response:
        return Response.text("")

    assert _failure(many) == (
        "parameter 'ids': CookieValue[list[str]]: a request carries one value per cookie name"
    )


# -- the startup check and ParamInfo -----------------------------------------------------------
@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (
            Query[tuple[int, int]],
            "Query[tuple[int, int]]: a query value is one piece of text; it cannot hold "
            "tuple[int, int]",
        ),
        (
            Query[list[dict[str, str]]],
            "Query[list[dict[str, str]]]: a query value is one piece of text; it cannot hold "
            "dict[str, str]",
        ),
        (HeaderValue[complex], "HeaderValue[complex]: no converter for complex"),
        (
            CookieValue[int | str],
            "CookieValue[int | str]: a cookie value is one piece of text; it cannot hold int | str",
        ),
    ],
)
def test_a_type_text_cannot_hold_is_refused_at_startup(annotation: Any, expected: str) -> None:
    async def handler(value: Any) -> Response:
        return Response.text("")

    handler.__annotations__["value"] = annotation
    assert _failure(handler) == f"parameter 'value': {expected}"


class Paging(FromRequest):
    def __init__(self, page: int, token: str | None) -> None:
        self.page, self.token = page, token

    @classmethod
    def from_request(
        cls, request: Request, page: Query[int] = 1, x_token: HeaderValue[str | None] = None
    ) -> Self:
        return cls(page, x_token)


async def test_a_dependency_takes_single_values_with_their_defaults() -> None:
    async def listing(paging: Paging) -> Response:
        return Response.json([paging.page, paging.token])

    async with TestClient(Router().get("/", listing)) as client:
        assert (await client.get("/")).json() == [1, None]
        assert (await client.get("/?page=4", headers={"x-token": "t"})).json() == [4, "t"]
        assert (await client.get("/?page=no")).json()["errors"] == [
            "query.page: expected an integer"
        ]


def test_param_info_gives_the_wire_name_and_the_parameter() -> None:
    async def described(
        paging: Paging,
        size: Annotated[Query[int], Alias("page-size")],
        q: Query[str | None],
        x_token: HeaderValue[str] = "t",
        session_id: CookieValue[str | None] = None,
    ) -> Response:
        return Response.text("")

    params = freeze(Router().get("/", described)).routes[0].params
    assert params == (
        ParamInfo("dependency", "paging", Paging),
        ParamInfo(
            "query", "page", int, required=False, default=1, dependency="Paging.from_request"
        ),
        ParamInfo(
            "header",
            "x-token",
            str | None,
            required=False,
            default=None,
            dependency="Paging.from_request",
            parameter="x_token",
        ),
        ParamInfo("query", "page-size", int, parameter="size"),
        ParamInfo("query", "q", str | None, required=False),  # None when absent
        ParamInfo("header", "x-token", str, required=False, default="t", parameter="x_token"),
        ParamInfo("cookie", "session_id", str | None, required=False, default=None),
    )
    assert params[4].parameter == "q"
