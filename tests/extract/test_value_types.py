"""Every common value type through Path, Query, Form and Json: accepted forms, refused forms
with their status and message, and the round trip through Response.json."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import json
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, NewType, TypedDict
from urllib.parse import quote

import attrs
import pytest

from trioframe import Form, Json, Path, Query, Response, Router
from trioframe.testing import TestClient

UTC = datetime.UTC
PLUS_TWO = datetime.timezone(datetime.timedelta(hours=2))
ID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.IntEnum):
    S = 1
    M = 2
    L = 3


class Mood(enum.StrEnum):
    CALM = "calm"
    BUSY = "busy"


UserId = NewType("UserId", int)


@attrs.frozen
class Case:
    """One type: (text, value) accepted and (text, message) refused in a path, query or form;
    the same for a JSON body."""

    kind: Any
    text: tuple[str, Any]
    bad_text: tuple[str, str] | None
    json: tuple[Any, Any]
    bad_json: tuple[Any, str]


CASES = [
    Case(str, ("héllo wörld", "héllo wörld"), None, ("x", "x"), (5, "expected a string")),
    Case(int, ("-42", -42), ("4.0", "expected an integer"), (7, 7), ("7", "expected an integer")),
    Case(
        float, ("1e3", 1000.0), ("nan", "expected a number"), (2, 2.0), (True, "expected a number")
    ),
    Case(
        bool,
        ("Yes", True),
        ("maybe", "expected a boolean (true/false, 1/0, yes/no, on/off)"),
        (False, False),
        (0, "expected a boolean"),
    ),
    Case(
        decimal.Decimal,
        ("12.50", decimal.Decimal("12.50")),
        ("1,5", "expected a decimal number"),
        (0.1, decimal.Decimal("0.1")),
        ("NaN", "expected a decimal number"),
    ),
    Case(
        uuid.UUID,
        (ID.upper(), uuid.UUID(ID)),
        ("abc", "expected a UUID"),
        (ID, uuid.UUID(ID)),
        (1, "expected a UUID"),
    ),
    Case(
        datetime.datetime,
        ("2024-05-01T12:30:00Z", datetime.datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
        ("2024-05-01", "expected an ISO 8601 datetime"),
        (
            "2024-05-01 12:30:00.25+02:00",
            datetime.datetime(2024, 5, 1, 12, 30, 0, 250000, PLUS_TWO),
        ),
        (1714566600, "expected an ISO 8601 datetime"),
    ),
    Case(
        datetime.date,
        ("2024-02-29", datetime.date(2024, 2, 29)),
        ("2023-02-29", "expected an ISO 8601 date (YYYY-MM-DD)"),
        ("2024-05-01", datetime.date(2024, 5, 1)),
        ("20240501", "expected an ISO 8601 date (YYYY-MM-DD)"),
    ),
    Case(
        datetime.time,
        ("12:30", datetime.time(12, 30)),
        ("25:00", "expected an ISO 8601 time"),
        ("08:15:30.5Z", datetime.time(8, 15, 30, 500000, UTC)),
        (815, "expected an ISO 8601 time"),
    ),
    Case(
        datetime.timedelta,
        ("90.5", datetime.timedelta(seconds=90.5)),
        ("P1Y", "expected a duration (seconds, or ISO 8601 such as 'PT1H30M')"),
        ("-P1DT2H0.000001S", -datetime.timedelta(days=1, hours=2, microseconds=1)),
        ([60], "expected a duration (seconds, or ISO 8601 such as 'PT1H30M')"),
    ),
    Case(
        Color,
        ("red", Color.RED),
        ("blue", "expected one of 'red', 'green'"),
        ("green", Color.GREEN),
        ("RED", "expected one of 'red', 'green'"),
    ),
    Case(
        Size,
        ("2", Size.M),
        ("02", "expected one of 1, 2, 3"),
        (3, Size.L),
        ("3", "expected one of 1, 2, 3"),
    ),
    Case(
        Mood,
        ("busy", Mood.BUSY),
        ("idle", "expected one of 'calm', 'busy'"),
        ("calm", Mood.CALM),
        (None, "expected one of 'calm', 'busy'"),
    ),
    Case(
        Literal["a", "b"],
        ("b", "b"),
        ("c", "expected one of 'a', 'b'"),
        ("a", "a"),
        (["a"], "expected one of 'a', 'b'"),
    ),
    Case(
        Literal[1, 2, True],
        ("true", True),
        ("3", "expected one of 1, 2, true"),
        (2, 2),
        (1.0, "expected one of 1, 2, true"),
    ),
    Case(UserId, ("5", 5), ("x", "expected an integer"), (5, 5), ("5", "expected an integer")),
    Case(
        Annotated[int, "doc"],
        ("5", 5),
        ("five", "expected an integer"),
        (5, 5),
        (5.5, "expected an integer"),
    ),
]


def _name(case: Case) -> str:
    return getattr(case.kind, "__name__", None) or repr(case.kind).replace("typing.", "")


def _handler(annotation: Any, seen: list[Any]) -> Callable[..., Any]:
    async def handler(v: Any) -> Response:
        seen.append(v)
        return Response.text("ok")

    handler.__annotations__ = {"v": annotation, "return": Response}
    return handler


@functools.cache
def _record(kind: Any) -> type:
    return dataclasses.make_dataclass("Fields", [("v", kind)])


def _router(kind: Any, seen: list[Any]) -> Router:
    fields = _record(kind)
    return (
        Router()
        .get("/path/{v}", _handler(Path[kind], seen))
        .get("/query", _handler(Query[fields], seen))
        .post("/form", _handler(Form[fields], seen))
        .post("/json", _handler(Json[kind], seen))
        .post("/field", _handler(Json[fields], seen))
    )


JSON_TYPE = {"content-type": "application/json"}


def _json_router(kind: Any, seen: list[Any]) -> Router:
    return Router().post("/json", _handler(Json[kind], seen))


def _only_error(response: Any) -> str:
    body = response.json()
    assert set(body) >= {"status", "error", "message"}
    assert "errors" in body, body
    errors: list[str] = body["errors"]
    assert len(errors) == 1, errors
    return errors[0]


@pytest.mark.parametrize("case", CASES, ids=_name)
async def test_accepted_values_through_every_source(case: Case) -> None:
    seen: list[Any] = []
    raw, expected = case.text
    async with TestClient(_router(case.kind, seen)) as client:
        assert (await client.get(f"/path/{quote(raw, safe='')}")).status_code == 200
        assert (await client.get("/query", params={"v": raw})).status_code == 200
        assert (await client.post("/form", data={"v": raw})).status_code == 200
        assert (await client.post("/json", json=case.json[0])).status_code == 200
        assert (await client.post("/field", json={"v": case.json[0]})).status_code == 200
    fields = _record(case.kind)
    assert seen == [
        expected,
        fields(expected),
        fields(expected),
        case.json[1],
        fields(case.json[1]),
    ]
    assert [type(value) for value in seen[::3]] == [type(expected), type(case.json[1])]


@pytest.mark.parametrize("case", [c for c in CASES if c.bad_text is not None], ids=_name)
async def test_refused_text_is_400_in_path_and_query_and_422_in_a_form(case: Case) -> None:
    assert case.bad_text is not None
    raw, message = case.bad_text
    async with TestClient(_router(case.kind, [])) as client:
        path = await client.get(f"/path/{quote(raw, safe='')}")
        query = await client.get("/query", params={"v": raw})
        form = await client.post("/form", data={"v": raw})
    assert (path.status_code, _only_error(path)) == (400, f"path.v: {message}")
    assert (query.status_code, _only_error(query)) == (400, f"query.v: {message}")
    assert (form.status_code, _only_error(form)) == (422, f"body.v: {message}")


@pytest.mark.parametrize("case", CASES, ids=_name)
async def test_refused_json_is_422_naming_the_field(case: Case) -> None:
    value, message = case.bad_json
    async with TestClient(_router(case.kind, [])) as client:
        whole = await client.post("/json", content=json.dumps(value), headers=JSON_TYPE)
        field = await client.post("/field", json={"v": value})
    expected = "body: required" if value is None else f"body: {message}"
    assert (whole.status_code, _only_error(whole)) == (422, expected)
    assert (field.status_code, _only_error(field)) == (422, f"body.v: {message}")


@pytest.mark.parametrize("case", CASES, ids=_name)
async def test_what_response_json_writes_reads_back_equal(case: Case) -> None:
    seen: list[Any] = []
    values = [case.text[1], case.json[1]]
    async with TestClient(_router(list[case.kind], seen)) as client:
        written = Response.json(values).body
        response = await client.post(
            "/json", content=written, headers={"content-type": "application/json"}
        )
    assert response.status_code == 200, response.text
    assert seen == [values]


# -- nested types, containers, records ---------------------------------------------------------
class _City(TypedDict):
    city: str


class Address(_City, total=False):
    zip: str


@dataclasses.dataclass
class Line:
    sku: uuid.UUID
    price: decimal.Decimal
    tags: frozenset[str] = frozenset()


@attrs.frozen
class Order:
    placed: datetime.datetime
    due: datetime.date | None
    lines: list[Line]
    address: Address
    window: tuple[datetime.time, datetime.time]
    color: Color = Color.RED
    notes: dict[str, list[int]] = attrs.Factory(dict)
    codes: set[Size] = attrs.Factory(set)
    hold: datetime.timedelta = datetime.timedelta(0)
    mode: Literal["fast", "slow"] = "slow"


ORDER = Order(
    placed=datetime.datetime(2024, 5, 1, 9, 0, tzinfo=PLUS_TWO),
    due=None,
    lines=[Line(uuid.UUID(ID), decimal.Decimal("19.99"), frozenset({"gift"}))],
    address={"city": "Lyon"},
    window=(datetime.time(9), datetime.time(17, 30)),
    color=Color.GREEN,
    notes={"a": [1, 2]},
    codes={Size.S, Size.L},
    hold=datetime.timedelta(days=2, seconds=5, microseconds=10),
    mode="fast",
)


async def test_a_nested_record_round_trips_through_response_json() -> None:
    seen: list[Any] = []
    async with TestClient(_json_router(Order, seen)) as client:
        written = Response.json(ORDER).body
        response = await client.post(
            "/json", content=written, headers={"content-type": "application/json"}
        )
    assert response.status_code == 200, response.text
    assert seen == [ORDER]
    assert b'"hold":"P2DT5.00001S"' in written and b'"price":"19.99"' in written


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ([ORDER.placed.isoformat()], ["body: expected a JSON object"]),
        ("order", ["body: expected a JSON object"]),
        (None, ["body: required"]),
        (
            {
                "placed": "2024-05-01",
                "due": "soon",
                "lines": {},
                "address": [],
                "window": ["09:00"],
            },
            [
                "body.placed: expected an ISO 8601 datetime",
                "body.due: expected an ISO 8601 date (YYYY-MM-DD)",
                "body.lines: expected a JSON array",
                "body.address: expected a JSON object",
                "body.window: expected a JSON array of 2 items",
            ],
        ),
        (
            {
                "placed": "2024-05-01T09:00:00Z",
                "due": None,
                "lines": [{"sku": ID, "price": "1"}, {"sku": ID[:-1], "price": "x", "tags": "a"}],
                "address": {"zip": "69001"},
                "window": ["09:00", "9:00"],
                "notes": {"a": [1], "b": [2, "3"]},
                "codes": [1, 4],
                "mode": "quick",
            },
            [
                "body.lines[1].sku: expected a UUID",
                "body.lines[1].price: expected a decimal number",
                "body.lines[1].tags: expected a JSON array",
                "body.address.city: required",
                "body.window[1]: expected an ISO 8601 time",
                "body.notes['b'][1]: expected an integer",
                "body.codes[1]: expected one of 1, 2, 3",
                "body.mode: expected one of 'fast', 'slow'",
            ],
        ),
    ],
)
async def test_a_body_of_the_wrong_shape_says_so(body: Any, errors: list[str]) -> None:
    async with TestClient(_json_router(Order, [])) as client:
        response = await client.post(
            "/json", content=json.dumps(body), headers={"content-type": "application/json"}
        )
    assert response.status_code == 422
    assert sorted(response.json()["errors"]) == sorted(errors)


async def test_null_is_a_value_where_the_type_allows_none() -> None:
    seen: list[Any] = []
    async with TestClient(_json_router(Order | None, seen)) as client:
        assert (
            await client.post(
                "/json", content=b"null", headers={"content-type": "application/json"}
            )
        ).status_code == 200
    assert seen == [None]


async def test_repeated_keys_fill_list_set_frozenset_and_tuple_fields() -> None:
    @dataclasses.dataclass
    class Filters:
        days: set[datetime.date]
        sizes: frozenset[Size]
        ids: tuple[uuid.UUID, ...] = ()
        colors: list[Color] = dataclasses.field(default_factory=list)
        since: datetime.datetime | None = None

    seen: list[Any] = []
    router = (
        Router().get("/q", _handler(Query[Filters], seen)).post("/f", _handler(Form[Filters], seen))
    )
    query = [
        ("days", "2024-01-01"),
        ("days", "2024-01-01"),
        ("sizes", "1"),
        ("ids", ID),
        ("colors", "red"),
        ("colors", "green"),
    ]
    async with TestClient(router) as client:
        assert (await client.get("/q", params=query)).status_code == 200
        assert (
            await client.post("/f", data={"days": "2024-01-02", "sizes": ["2", "3"]})
        ).status_code == 200
        bad = await client.get("/q", params=[("days", "x"), ("sizes", "1"), ("sizes", "9")])
    assert seen == [
        Filters(
            {datetime.date(2024, 1, 1)},
            frozenset({Size.S}),
            (uuid.UUID(ID),),
            [Color.RED, Color.GREEN],
        ),
        Filters({datetime.date(2024, 1, 2)}, frozenset({Size.M, Size.L})),
    ]
    assert bad.status_code == 400
    assert sorted(bad.json()["errors"]) == [
        "query.days[0]: expected an ISO 8601 date (YYYY-MM-DD)",
        "query.sizes[1]: expected one of 1, 2, 3",
    ]


async def test_path_tuples_lists_and_records_of_any_value_type() -> None:
    @attrs.frozen
    class Key:
        day: datetime.date
        id: uuid.UUID

    seen: list[Any] = []
    router = (
        Router()
        .get("/t/{day}/{id}", _handler(Path[tuple[datetime.date, uuid.UUID]], seen))
        .get("/r/{day}/{id}", _handler(Path[Key], seen))
        .get("/l/{a}/{b}", _handler(Path[list[Size]], seen))
    )
    async with TestClient(router) as client:
        assert (await client.get(f"/t/2024-01-02/{ID}")).status_code == 200
        assert (await client.get(f"/r/2024-01-02/{ID}")).status_code == 200
        assert (await client.get("/l/1/3")).status_code == 200
        bad = await client.get("/r/2024-01-32/x")
    day = datetime.date(2024, 1, 2)
    assert seen == [(day, uuid.UUID(ID)), Key(day, uuid.UUID(ID)), [Size.S, Size.L]]
    assert sorted(bad.json()["errors"]) == [
        "path.day: expected an ISO 8601 date (YYYY-MM-DD)",
        "path.id: expected a UUID",
    ]


async def test_query_dict_values_are_converted() -> None:
    seen: list[Any] = []
    router = Router().get("/", _handler(Query[dict[str, int]], seen))
    async with TestClient(router) as client:
        assert (await client.get("/?a=1&b=2")).status_code == 200
        bad = await client.get("/?a=1&b=x")
    assert seen == [{"a": 1, "b": 2}]
    assert bad.status_code == 400 and bad.json()["errors"] == ["query['b']: expected an integer"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("PT0S", datetime.timedelta(0)),
        ("P2W", datetime.timedelta(weeks=2)),
        ("PT1H30M", datetime.timedelta(hours=1, minutes=30)),
        ("P1DT0.5S", datetime.timedelta(days=1, milliseconds=500)),
        ("-PT1.0000019S", -datetime.timedelta(seconds=1, microseconds=1)),
        ("-3", datetime.timedelta(seconds=-3)),
    ],
)
def test_durations_in_iso_8601_and_in_seconds(text: str, value: datetime.timedelta) -> None:
    from trioframe._codec.values import format_duration, parse_duration

    assert parse_duration(text) == value
    assert parse_duration(format_duration(value)) == value


@pytest.mark.parametrize("text", ["P", "PT", "P1M", "PT1.5H", "P1DT", "1e999999", "p1d", "P-1D"])
def test_durations_refused(text: str) -> None:
    from trioframe._codec.values import ExtractionValueError, parse_duration

    with pytest.raises(ExtractionValueError, match="expected a duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01T12:30:00+0200",
        "2024-05-01T12:30:00.Z",
        "2024-5-1T12:30",
        "٢٠٢٤-05-01T12:30",
        "2024-05-01T24:00",
    ],
)
def test_datetimes_outside_the_extended_format_are_refused(text: str) -> None:
    from trioframe._codec.values import ExtractionValueError, parse_datetime

    with pytest.raises(ExtractionValueError, match="expected an ISO 8601 datetime"):
        parse_datetime(text)
