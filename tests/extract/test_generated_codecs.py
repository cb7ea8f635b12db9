"""The functions generated per attrs class read and write exactly what the cattrs path does:
whenever one returns, the cattrs path returns the same value (the same types all the way
down) or the same text; whenever it gives up, the cattrs path runs, so errors are its own."""

from __future__ import annotations

import datetime
import decimal
import enum
import importlib.util
import sys
import uuid
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz._settings import fuzz_settings
from trioframe import Json, Response, Router
from trioframe._codec import generated, msgspec_json, values, writers
from trioframe._codec.convert import JSON_CONVERTER, describe_failure
from trioframe._codec.encode import _encode, encode_json
from trioframe._codec.values import ExtractionValueError
from trioframe.testing import TestClient


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class Mixed(enum.Enum):
    TEXT = "t"
    NUMBER = 2


@attrs.frozen
class Inner:
    x: int
    label: str | None = None


@attrs.frozen
class Point:
    x: int
    y: int


def _positive(instance: Any, attribute: Any, value: int) -> None:
    if value < 0:
        raise ValueError("must not be negative")


@attrs.define
class Outer:
    n: int
    s: str
    b: bool
    f: float
    price: decimal.Decimal
    id: uuid.UUID
    at: datetime.datetime
    day: datetime.date
    clock: datetime.time
    colour: Colour
    size: Size
    mixed: Mixed
    tags: list[str]
    grid: list[list[int]]
    inner: Inner
    inners: list[Inner]
    points: list[Point]
    at_point: Point | None
    maybe: Inner | None
    note: str | None
    count: int = attrs.field(default=0, validator=_positive)
    extras: list[str] = attrs.Factory(list)


def test_the_classes_here_get_generated_functions() -> None:
    assert generated.structurer(Outer, JSON_CONVERTER) is not None
    assert writers.writer(Outer) is not None


def test_msgspec_writes_when_the_speedups_extra_is_installed() -> None:
    installed = importlib.util.find_spec("msgspec") is not None
    assert (msgspec_json.encode is not None) is installed
    write = writers.writer(Outer)
    assert write is not None
    assert (msgspec_json.encode in write.__globals__.values()) is installed


def test_without_msgspec_there_is_no_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "msgspec", None)  # as if the extra were not installed
    spec = importlib.util.spec_from_file_location("msgspec_json_copy", msgspec_json.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.encode is None


def test_without_msgspec_a_record_gets_the_text_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    @attrs.frozen
    class Late:
        at: datetime.datetime
        tags: list[str]

    installed = msgspec_json.encode
    monkeypatch.setattr(msgspec_json, "encode", None)
    write = writers.writer(Late)
    assert write is not None
    assert installed is None or installed not in write.__globals__.values()
    value = Late(datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC), ["a"])
    assert write(value) == _encode(value) == b'{"at":"2026-01-01T00:00:00+00:00","tags":["a"]}'


class Permission(enum.IntFlag):
    READ = 1
    WRITE = 2


@attrs.frozen
class Permissions:
    granted: Permission


def test_a_flag_is_left_to_the_text_writer() -> None:
    with pytest.raises(generated.NotHandled):
        writers.make_checked_writer(Permissions, _encode)


@attrs.define
class Node:
    children: list[Node]


@attrs.define
class Private:
    _secret: int


@attrs.define
class Converted:
    n: int = attrs.field(converter=int)


@pytest.mark.parametrize("kind", [Node, Private, Converted])
def test_classes_outside_the_generated_subset_are_left_to_cattrs(kind: type) -> None:
    assert generated.structurer(kind, JSON_CONVERTER) is None
    assert writers.writer(kind) is None


# -- reading --------------------------------------------------------------------------------
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
_INNER_JSON = st.fixed_dictionaries(
    {"x": st.integers()}, optional={"label": st.none() | st.text(max_size=4)}
)
_GOOD_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "n": st.integers(),
    "s": st.text(max_size=8),
    "b": st.booleans(),
    "f": st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    "price": st.sampled_from(["12.50", "1e3", "-0", 3, 2.5]),
    "id": st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper()),
    "at": st.sampled_from(["2026-11-28T10:00:00+01:00", "2026-11-28 10:00Z"]),
    "day": st.dates().map(str),
    "clock": st.sampled_from(["10:00", "10:00:00.5+02:00"]),
    "colour": st.sampled_from(["red", "blue"]),
    "size": st.sampled_from([1, 2]),
    "mixed": st.sampled_from(["t", 2]),
    "tags": st.lists(st.text(max_size=3), max_size=3),
    "grid": st.lists(st.lists(st.integers(), max_size=3), max_size=3),
    "inner": _INNER_JSON,
    "inners": st.lists(_INNER_JSON, max_size=3),
    "points": st.lists(st.fixed_dictionaries({"x": st.integers(), "y": st.integers()}), max_size=3),
    "at_point": st.none() | st.fixed_dictionaries({"x": st.integers(), "y": st.integers()}),
    "maybe": st.none() | _INNER_JSON,
    "note": st.none() | st.text(max_size=4),
    "count": st.integers(min_value=-1, max_value=6),
    "extras": st.lists(st.text(max_size=3), max_size=2),
}
#: Values that come close: the right JSON type, not a value of the field's type.
_NEAR_MISSES = st.sampled_from(
    [
        *("x", "NaN", "not-a-uuid", "{" + "0" * 32 + "}", "2026-13-01T00:00", "2026-02-30"),
        *("20261201", "25:00", "green", "1", True, 1.0, 2.0, 1.5, 3, -1, [1], {"x": "1"}),
    ]
)


@st.composite
def _outer_json(draw: st.DrawFn) -> Any:
    """An object for ``Outer``: mostly right, with fields missing, extra or of any JSON."""
    document: dict[str, Any] = {}
    for name, good in _GOOD_FIELDS.items():
        choice = draw(st.integers(0, 39))
        if choice == 0:
            continue  # missing
        if choice == 1:
            document[name] = draw(_ANY_JSON)
        else:
            document[name] = draw(_NEAR_MISSES if choice == 2 else good)
    if draw(st.booleans()):
        document["extra"] = draw(_ANY_JSON)
    return document if draw(st.integers(0, 29)) else draw(_ANY_JSON)


def _typed(value: Any) -> Any:
    """``value`` with the type of every part alongside it, so ``1 == 1.0 == True`` differ."""
    if attrs.has(type(value)):
        fields = attrs.fields(type(value))
        return (type(value), tuple(_typed(getattr(value, f.name)) for f in fields))
    if isinstance(value, list):
        return (list, tuple(_typed(item) for item in value))
    return (type(value), value)


def _cattrs_outcome(value: Any, kind: type) -> Any:
    try:
        return ("value", _typed(JSON_CONVERTER.structure(value, kind)))
    except Exception as exc:
        return ("errors", describe_failure(exc, "body"))


@fuzz_settings(1500)
@given(document=_outer_json())
def test_the_generated_reader_reads_what_cattrs_reads(document: Any) -> None:
    fast = generated.structurer(Outer, JSON_CONVERTER)
    assert fast is not None
    try:
        read = fast(document)
    except Exception:
        return  # the caller falls back to the cattrs path itself
    assert ("value", _typed(read)) == _cattrs_outcome(document, Outer)


async def test_a_body_that_does_not_fit_gets_the_cattrs_errors() -> None:
    async def take(value: Json[Outer]) -> Response:
        return Response.json({"n": value.n})

    document = {"n": "3", "s": 1, "inner": {"x": True}, "tags": ["a", 2], "count": -1}
    expected = _cattrs_outcome(document, Outer)
    async with TestClient(Router().post("/o", take)) as client:
        response = await client.post("/o", json=document)
    assert response.status_code == 422
    assert ("errors", response.json()["errors"]) == expected
    assert "body.n: expected an integer" in expected[1]


# -- writing --------------------------------------------------------------------------------
class _Text(str):
    """A str subclass: written as the str it is."""


_ODD = st.sampled_from(
    [
        *(None, True, 1, 1.0, float("nan"), float("inf"), "x", b"x", [1], {}),
        *(datetime.datetime(2026, 1, 1), decimal.Decimal(1), uuid.UUID(int=1), Colour.RED),
        _Text('a "quoted" text'),
    ]
)


def _or_odd(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value of the declared type; sometimes one of another (attrs does not check)."""
    return st.integers(0, 39).flatmap(lambda n: _ODD if n == 0 else good)


#: No zone, a named one, or a fixed offset: zero, whole minutes, or with seconds.
_ZONES = (
    st.none()
    | st.timezones()
    | st.just(datetime.UTC)
    | st.timedeltas(
        min_value=datetime.timedelta(hours=-23, minutes=-59),
        max_value=datetime.timedelta(hours=23, minutes=59),
    ).map(datetime.timezone)
    | st.integers(-1439, 1439).map(lambda m: datetime.timezone(datetime.timedelta(minutes=m)))
)
#: Floats near where a float's text takes an exponent (below 1e-4, from 1e16).
_AROUND_EXPONENTS = st.builds(
    lambda digits, exponent: digits * 10.0**exponent, st.floats(-10, 10), st.integers(-8, 20)
)
#: Controls and lone surrogates included.
_ANY_CHARACTER = st.characters(codec=None, exclude_categories=())

_INNERS = st.builds(Inner, _or_odd(st.integers()), _or_odd(st.none() | st.text(max_size=4)))
_OUTERS = st.builds(
    Outer,
    n=_or_odd(st.integers()),
    s=_or_odd(st.text(max_size=8) | st.text(_ANY_CHARACTER, max_size=8)),
    b=_or_odd(st.booleans()),
    f=_or_odd(st.floats(allow_nan=False, allow_infinity=False) | _AROUND_EXPONENTS),
    price=_or_odd(st.decimals(allow_nan=True, places=None)),
    id=_or_odd(st.uuids()),
    at=_or_odd(st.datetimes(timezones=_ZONES)),
    day=_or_odd(st.dates()),
    clock=_or_odd(st.times(timezones=_ZONES)),
    colour=_or_odd(st.sampled_from(Colour)),
    size=_or_odd(st.sampled_from(Size)),
    mixed=_or_odd(st.sampled_from(Mixed)),
    tags=_or_odd(st.lists(_or_odd(st.text(max_size=3)), max_size=3)),
    grid=_or_odd(st.lists(st.lists(_or_odd(st.integers()), max_size=3), max_size=3)),
    inner=_or_odd(_INNERS),
    inners=_or_odd(st.lists(_INNERS, max_size=3)),
    points=_or_odd(st.lists(st.builds(Point, _or_odd(st.integers()), st.integers()), max_size=3)),
    at_point=_or_odd(st.none() | st.builds(Point, st.integers(), _or_odd(st.integers()))),
    maybe=_or_odd(st.none() | _INNERS),
    note=_or_odd(st.none() | st.text(max_size=4)),
    count=st.integers(min_value=0, max_value=5),
    extras=_or_odd(st.lists(st.text(max_size=3), max_size=2)),
)


def _written(encode: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("text", encode(value))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


#: Both kinds of writer, whether or not msgspec is installed: the checks then msgspec (the
#: encoder itself standing in for msgspec where it is not installed), and the f-string.
_WRITER_KINDS = {
    "checked": lambda kind: writers.make_checked_writer(kind, msgspec_json.encode or _encode),
    "text": writers.make_text_writer,
}


@pytest.mark.parametrize("made", sorted(_WRITER_KINDS))
@fuzz_settings(1500)
@given(value=_OUTERS)
def test_the_generated_writer_writes_what_the_encoder_writes(made: str, value: Outer) -> None:
    write = _WRITER_KINDS[made](Outer)
    try:
        text = write(value)
    except Exception:
        return  # encode_json falls back to the encoder itself
    assert ("text", text) == _written(_encode, value)


@attrs.frozen
class Measure:
    f: float


@attrs.frozen
class Moment:
    at: datetime.datetime


@attrs.frozen
class Clock:
    at: datetime.time


@attrs.frozen
class Text:
    s: str


#: One value at a time of the types whose text msgspec and the encoder may write apart.
_ONE_VALUE = (
    st.builds(Measure, st.floats() | _AROUND_EXPONENTS)
    | st.builds(Moment, st.datetimes(timezones=_ZONES))
    | st.builds(Clock, st.times(timezones=_ZONES))
    | st.builds(Text, st.text(_ANY_CHARACTER))
)


@pytest.mark.parametrize("made", sorted(_WRITER_KINDS))
@fuzz_settings(2000)
@given(value=_ONE_VALUE)
def test_floats_times_and_texts_are_written_as_the_encoder_writes(made: str, value: Any) -> None:
    write = _WRITER_KINDS[made](type(value))
    try:
        text = write(value)
    except Exception:
        return  # encode_json falls back to the encoder itself
    assert ("text", text) == _written(_encode, value)


@fuzz_settings(300)
@given(value=_OUTERS)
def test_encode_json_answers_as_the_encoder_does(value: Outer) -> None:
    assert _written(encode_json, value) == _written(_encode, value)


@attrs.define
class Stamped:
    at: datetime.datetime


def test_a_failing_converter_hook_leaves_the_next_encoding_clean() -> None:
    """A hook's own exception (not a TypeError or ValueError) used to leave the encoder's
    cycle bookkeeping behind: the same value then read as a circular reference."""
    broken = Stamped(None)  # type: ignore[arg-type]
    for _ in range(2):
        with pytest.raises(AttributeError, match="isoformat"):
            _encode(broken)


def _uuid_outcome(parse: Any, text: str) -> Any:
    try:
        value = parse(text)
    except ExtractionValueError as exc:
        return ("error", str(exc))
    return (type(value), value.int, value.is_safe, str(value), hash(value))


def _uuid_reference(text: str) -> uuid.UUID:
    if values._UUID.fullmatch(text):
        return uuid.UUID(text)
    raise ExtractionValueError(values.UUID_EXPECTED)


@fuzz_settings(500)
@given(
    text=st.uuids().map(str)
    | st.uuids().map(lambda u: str(u).upper())
    | st.text(alphabet="0123456789abcdefABCDEF-{}xu:", max_size=40)
)
def test_a_uuid_is_built_as_uuid_builds_it(text: str) -> None:
    assert _uuid_outcome(values.parse_uuid, text) == _uuid_outcome(_uuid_reference, text)
