"""JSON Schemas of the value types, as the JSON converter reads (input) and writes (output)
them: inline schemas, components, input/output splits, name collisions, recursion,
constraints, pydantic models, and the converter checked against the schemas."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import re
import typing
import uuid
from typing import Annotated, Any, Literal, NewType, NotRequired, TypedDict

import attrs
import cattrs
import jsonschema
import pydantic
import pytest
from annotated_types import Ge, Gt, Interval, Le, Len, Lt, MaxLen, MinLen, MultipleOf, Predicate
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._codec.check import UnsupportedType
from trioframe._codec.convert import JSON_CONVERTER
from trioframe._openapi import SchemaRegistry
from trioframe._openapi.inline import DECIMAL_PATTERN, DURATION_PATTERN

from . import models_a, models_b


def schema(kind: Any, direction: str = "input") -> dict[str, Any]:
    return SchemaRegistry().schema_for(kind, direction=direction)  # type: ignore[arg-type]


def both(kind: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return schema(kind, "input"), schema(kind, "output")


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    ONE = 1
    NAME = "name"


# -- scalars --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (type(None), {"type": "null"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (datetime.date, {"type": "string", "format": "date"}),
        (datetime.time, {"type": "string", "format": "time"}),
        (Any, {}),
        (NewType("UserId", int), {"type": "integer"}),
    ],
)
def test_scalars_are_the_same_both_ways(kind: Any, expected: dict[str, Any]) -> None:
    assert both(kind) == (expected, expected)


def test_a_decimal_is_read_from_a_string_or_a_number_and_written_as_a_string() -> None:
    text = {"type": "string", "format": "decimal", "pattern": DECIMAL_PATTERN}
    assert both(decimal.Decimal) == ({"anyOf": [text, {"type": "number"}]}, text)


def test_a_duration_is_read_from_seconds_or_iso_8601_and_written_as_iso_8601() -> None:
    text = {"type": "string", "format": "duration", "pattern": DURATION_PATTERN}
    assert both(datetime.timedelta) == ({"anyOf": [{"type": "number"}, text]}, text)


def test_bytes_has_no_converter_and_no_schema() -> None:
    with pytest.raises(UnsupportedType, match=r"^no JSON Schema for bytes$"):
        schema(bytes)
    with pytest.raises(ValueError, match="direction must be 'input' or 'output', not 'in'"):
        SchemaRegistry().schema_for(int, direction="in")  # type: ignore[arg-type]


# -- choices --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (Color, {"enum": ["red", "green"], "type": "string"}),
        (Level, {"enum": [1, 2], "type": "integer"}),
        (Mixed, {"enum": [1, "name"]}),
        (Literal["fast"], {"const": "fast", "type": "string"}),
        (Literal["fast", "slow"], {"enum": ["fast", "slow"], "type": "string"}),
        (Literal[True, None], {"enum": [True, None]}),
        (Literal[Color.RED], {"const": "red", "type": "string"}),
    ],
)
def test_enums_and_literals_list_their_json_values(kind: Any, expected: dict[str, Any]) -> None:
    assert both(kind) == (expected, expected)


# -- unions and collections -----------------------------------------------------------------
def test_optional_is_any_of_with_null() -> None:
    assert schema(int | None) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_int_or_float_is_a_number_not_overlapping_branches() -> None:
    assert schema(int | float) == {"type": "number"}
    assert schema(int | float | None) == {"anyOf": [{"type": "number"}, {"type": "null"}]}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (typing.Sequence[str], {"type": "array", "items": {"type": "string"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
        (list, {"type": "array"}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object"}),
    ],
)
def test_collections(kind: Any, expected: dict[str, Any]) -> None:
    assert both(kind) == (expected, expected)


def test_collections_of_values_that_differ_differ() -> None:
    duration_in, duration_out = both(datetime.timedelta)
    assert both(list[datetime.timedelta]) == (
        {"type": "array", "items": duration_in},
        {"type": "array", "items": duration_out},
    )


# -- constraints ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (Annotated[int, Ge(1), Le(100)], {"type": "integer", "minimum": 1, "maximum": 100}),
        (
            Annotated[float, Gt(0), Lt(1)],
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        (
            Annotated[int, Interval(ge=1, lt=10)],
            {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
        ),
        (Annotated[int, Ge(1), Ge(3)], {"type": "integer", "minimum": 3}),
        (Annotated[int, MultipleOf(5)], {"type": "integer", "multipleOf": 5}),
        (Annotated[str, Len(3, 20)], {"type": "string", "minLength": 3, "maxLength": 20}),
        (
            Annotated[list[int], MinLen(1)],
            {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        ),
        (
            Annotated[dict[str, int], MaxLen(5)],
            {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 5},
        ),
        (
            Annotated[str | None, MaxLen(5)],
            {"anyOf": [{"type": "string"}, {"type": "null"}], "maxLength": 5},
        ),
        (Annotated[int, Predicate(lambda v: v % 2 == 0)], {"type": "integer"}),
        (
            Annotated[datetime.date, Ge(datetime.date(2024, 1, 1))],
            {"type": "string", "format": "date"},
        ),
        (Annotated[int, "a description"], {"type": "integer"}),
    ],
)
def test_constraints_become_keywords(kind: Any, expected: dict[str, Any]) -> None:
    assert schema(kind) == expected


def test_decimal_bounds_are_json_numbers() -> None:
    kind = Annotated[decimal.Decimal, Ge(decimal.Decimal("0.5")), Le(decimal.Decimal(10))]
    found = schema(kind, "output")
    assert (found["minimum"], found["maximum"]) == (0.5, 10)
    assert type(found["maximum"]) is int


# -- records --------------------------------------------------------------------------------
@attrs.frozen
class Point:
    x: int
    y: int


@attrs.frozen
class Line:
    sku: str
    quantity: Annotated[int, Ge(1)] = 1
    tags: list[str] = attrs.Factory(list)
    made: datetime.datetime = attrs.Factory(datetime.datetime.now)
    _private: str = "p"
    hidden: int = attrs.field(init=False, default=0)


@dataclasses.dataclass
class Shipment:
    weight: float
    note: str | None = None
    label: dict[str, str] = dataclasses.field(default_factory=dict)
    at: datetime.date = datetime.date(2024, 5, 1)


class Address(TypedDict):
    city: str
    zip: NotRequired[str]


@attrs.frozen
class Tree:
    value: int
    children: list[Tree]
    parent: Tree | None


def test_a_record_is_a_reference_to_its_component() -> None:
    registry = SchemaRegistry()
    assert registry.schema_for(Point, direction="input") == {"$ref": "#/components/schemas/Point"}
    assert registry.schema_for(Point, direction="output") == {"$ref": "#/components/schemas/Point"}
    assert registry.components() == {
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        }
    }


def test_defaults_make_separate_input_and_output_components() -> None:
    registry = SchemaRegistry()
    assert registry.schema_for(Line, direction="input") == {
        "$ref": "#/components/schemas/Line-Input"
    }
    assert registry.schema_for(Line, direction="output") == {
        "$ref": "#/components/schemas/Line-Output"
    }
    components = registry.components()
    assert list(components) == ["Line-Input", "Line-Output"]
    properties = {
        "sku": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1, "default": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "made": {"type": "string", "format": "date-time"},  # a factory of its own: no default
        "_private": {"type": "string", "default": "p"},  # keys are attribute names
    }
    assert components["Line-Input"] == {
        "type": "object",
        "properties": properties,
        "required": ["sku"],
    }
    output = components["Line-Output"]
    assert output["required"] == ["sku", "quantity", "tags", "made", "_private"]
    assert "default" not in output["properties"]["quantity"]


def test_dataclass_defaults_are_written_as_the_converter_writes_them() -> None:
    registry = SchemaRegistry()
    registry.schema_for(Shipment, direction="input")
    properties = registry.components()["Shipment-Input"]["properties"]
    assert properties["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert properties["label"]["default"] == {}
    assert properties["at"] == {"type": "string", "format": "date", "default": "2024-05-01"}
    assert registry.components()["Shipment-Input"]["required"] == ["weight"]


def test_a_typeddict_requires_its_required_keys_both_ways() -> None:
    registry = SchemaRegistry()
    registry.schema_for(Address, direction="input")
    registry.schema_for(Address, direction="output")
    assert registry.components() == {
        "Address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["city"],
        }
    }


def test_a_record_holding_a_record_that_differs_differs_too() -> None:
    @attrs.frozen
    class Order:
        lines: list[Line]

    registry = SchemaRegistry()
    registry.schema_for(Order, direction="output")
    components = registry.components()
    assert set(components) == {"Line-Input", "Line-Output", "Order-Input", "Order-Output"}
    items = components["Order-Output"]["properties"]["lines"]["items"]
    assert items == {"$ref": "#/components/schemas/Line-Output"}


def test_a_value_that_differs_splits_a_record_without_defaults() -> None:
    @attrs.frozen
    class Price:
        amount: decimal.Decimal

    registry = SchemaRegistry()
    registry.schema_for(Price, direction="input")
    assert list(registry.components()) == ["Price-Input", "Price-Output"]


def test_recursive_records_refer_to_themselves() -> None:
    registry = SchemaRegistry()
    assert registry.schema_for(Tree, direction="input") == {"$ref": "#/components/schemas/Tree"}
    tree = registry.components()["Tree"]
    assert tree["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/Tree"},
    }
    assert tree["properties"]["parent"] == {
        "anyOf": [{"$ref": "#/components/schemas/Tree"}, {"type": "null"}]
    }


@attrs.frozen
class Folder:
    name: str
    folders: list[Folder] = attrs.Factory(list)


def test_a_recursive_record_that_differs_splits_every_reference() -> None:
    registry = SchemaRegistry()
    registry.schema_for(Folder, direction="output")
    components = registry.components()
    assert components["Folder-Input"]["properties"]["folders"]["items"] == {
        "$ref": "#/components/schemas/Folder-Input"
    }
    assert components["Folder-Output"]["properties"]["folders"]["items"] == {
        "$ref": "#/components/schemas/Folder-Output"
    }


def test_unions_of_records_are_any_of() -> None:
    registry = SchemaRegistry()
    assert registry.schema_for(Point | Tree, direction="input") == {
        "anyOf": [{"$ref": "#/components/schemas/Point"}, {"$ref": "#/components/schemas/Tree"}]
    }


# -- names ----------------------------------------------------------------------------------
def test_classes_sharing_a_name_are_qualified_earlier_references_included() -> None:
    registry = SchemaRegistry()
    first = registry.schema_for(models_a.Item, direction="input")
    assert first == {"$ref": "#/components/schemas/Item"}
    second = registry.schema_for(list[models_b.Item], direction="input")
    assert first == {"$ref": "#/components/schemas/tests.openapi.models_a.Item"}
    assert second["items"] == {"$ref": "#/components/schemas/tests.openapi.models_b.Item"}
    assert list(registry.components()) == [
        "tests.openapi.models_a.Item",
        "tests.openapi.models_b.Item",
    ]


def test_names_do_not_depend_on_the_order_of_registration() -> None:
    names = []
    for kinds in ([models_a.Item, models_b.Item, Point], [Point, models_b.Item, models_a.Item]):
        registry = SchemaRegistry()
        for kind in kinds:
            registry.schema_for(kind, direction="output")
        names.append(json.dumps(registry.components(), sort_keys=True))
    assert names[0] == names[1]


def test_classes_made_by_one_function_are_numbered() -> None:
    def make() -> type:
        @attrs.frozen
        class Thing:
            a: int

        return Thing

    registry = SchemaRegistry()
    registry.schema_for(make(), direction="input")
    registry.schema_for(make(), direction="input")
    qualified = "tests.openapi.test_schema.test_classes_made_by_one_function_are_numbered._locals_"
    assert list(registry.components()) == [
        f"{qualified}.make._locals_.Thing",
        f"{qualified}.make._locals_.Thing__2",
    ]


# -- pydantic -------------------------------------------------------------------------------


class Venue(pydantic.BaseModel):
    city: str


class Event(pydantic.BaseModel):
    title: str
    venue: Venue
    seats: int = 10
    follow_up: Event | None = None


class Booking(pydantic.BaseModel):
    when: datetime.datetime

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def day(self) -> str:
        return self.when.date().isoformat()


def test_pydantic_definitions_are_hoisted_into_components() -> None:
    registry = SchemaRegistry()
    assert registry.schema_for(Event, direction="input") == {"$ref": "#/components/schemas/Event"}
    components = registry.components()
    assert list(components) == ["Event", "Venue"]
    event = components["Event"]
    assert event["properties"]["venue"] == {"$ref": "#/components/schemas/Venue"}
    assert event["properties"]["follow_up"]["anyOf"][0] == {"$ref": "#/components/schemas/Event"}
    assert event["required"] == ["title", "venue"]
    assert components["Venue"]["properties"] == {"city": {"title": "City", "type": "string"}}


def test_a_pydantic_model_whose_modes_differ_is_split() -> None:
    registry = SchemaRegistry()
    registry.schema_for(Booking, direction="output")
    components = registry.components()
    assert list(components) == ["Booking-Input", "Booking-Output"]
    assert "day" in components["Booking-Output"]["properties"]
    assert "day" not in components["Booking-Input"]["properties"]


def test_a_pydantic_model_inside_a_record_and_a_shared_definition() -> None:
    @attrs.frozen
    class Tour:
        stops: list[Venue]
        main: Event

    registry = SchemaRegistry()
    registry.schema_for(Tour, direction="input")
    assert list(registry.components()) == ["Event", "Tour", "Venue"]
    stops = registry.components()["Tour"]["properties"]["stops"]
    assert stops == {"type": "array", "items": {"$ref": "#/components/schemas/Venue"}}


# -- the converter against the schemas ------------------------------------------------------
UTC = datetime.UTC


@attrs.frozen
class Everything:
    text: Annotated[str, MaxLen(30)]
    count: Annotated[int, Ge(0)]
    ratio: float
    flag: bool
    amount: decimal.Decimal
    ident: uuid.UUID
    moment: datetime.datetime
    day: datetime.date
    clock: datetime.time
    wait: datetime.timedelta
    color: Color
    level: Level
    mode: Literal["fast", "slow"]
    maybe: int | None
    tags: set[str]
    pair: tuple[int, str]
    scores: dict[str, float]
    tree: Tree | None
    extra: Any = None


_text = st.text(max_size=30)
_tree: st.SearchStrategy[Tree] = st.deferred(
    lambda: st.builds(
        Tree,
        value=st.integers(),
        children=st.lists(_tree, max_size=2),
        parent=st.none() | _tree,
    )
)
_everything = st.builds(
    Everything,
    text=_text,
    count=st.integers(min_value=0),
    ratio=st.floats(allow_nan=False, allow_infinity=False),
    flag=st.booleans(),
    amount=st.decimals(allow_nan=False, allow_infinity=False),
    ident=st.uuids(),
    moment=st.datetimes(timezones=st.just(UTC)),
    day=st.dates(),
    clock=st.times(timezones=st.just(UTC)),
    wait=st.timedeltas(),
    color=st.sampled_from(Color),
    level=st.sampled_from(Level),
    mode=st.sampled_from(["fast", "slow"]),
    maybe=st.none() | st.integers(),
    tags=st.sets(_text, max_size=3),
    pair=st.tuples(st.integers(), _text),
    scores=st.dictionaries(_text, st.floats(allow_nan=False, allow_infinity=False)),
    tree=st.none() | st.builds(Tree, value=st.integers(), children=st.just([]), parent=st.none()),
    extra=st.none() | st.integers() | _text,
)


def _validator(kind: Any, direction: str) -> Any:
    registry = SchemaRegistry()
    root = registry.schema_for(kind, direction=direction)  # type: ignore[arg-type]
    document = {**root, "components": {"schemas": registry.components()}}
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(
        document, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@settings(max_examples=150, deadline=None)
@given(_everything)
def test_what_the_converter_writes_fits_the_output_schema(value: Everything) -> None:
    written = json.loads(json.dumps(JSON_CONVERTER.unstructure(value)))
    _validator(Everything, "output").validate(written)
    assert JSON_CONVERTER.structure(written, Everything) == value


_VALID_INPUTS = [
    {  # the other forms the converter reads: a decimal and a duration as numbers
        "text": "x",
        "count": 0,
        "ratio": 1,
        "flag": False,
        "amount": 12.5,
        "ident": "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
        "moment": "2024-05-01T12:30:00Z",
        "day": "2024-05-01",
        "clock": "12:30:00+02:00",
        "wait": 90,
        "color": "red",
        "level": 2,
        "mode": "slow",
        "maybe": None,
        "tags": ["a", "b"],
        "pair": [1, "one"],
        "scores": {"a": 1.5},
        "tree": {"value": 1, "children": [], "parent": None},
    },
    {
        "text": "",
        "count": 7,
        "ratio": -0.5,
        "flag": True,
        "amount": "-1.50e3",
        "ident": "3F2504E0-4F89-41D3-9A0C-0305E82C3301",
        "moment": "2024-05-01T12:30:00.123456+02:00",
        "day": "2000-02-29",
        "clock": "23:59:59Z",
        "wait": "-P2DT0.5S",
        "color": "green",
        "level": 1,
        "mode": "fast",
        "maybe": 3,
        "tags": [],
        "pair": [-1, ""],
        "scores": {},
        "tree": None,
        "extra": {"anything": [1, 2]},
    },
]


@pytest.mark.parametrize("body", _VALID_INPUTS)
def test_input_valid_under_the_input_schema_is_accepted(body: dict[str, Any]) -> None:
    _validator(Everything, "input").validate(body)
    JSON_CONVERTER.structure(body, Everything)


@pytest.mark.parametrize(
    ("field", "value"),
    [("count", -1), ("text", "x" * 31), ("amount", "NaN"), ("wait", "P1Y"), ("pair", [1])],
)
def test_input_the_converter_refuses_is_refused_by_the_input_schema(field: str, value: Any) -> None:
    body = {**_VALID_INPUTS[0], field: value}
    assert not _validator(Everything, "input").is_valid(body)
    with pytest.raises(cattrs.ClassValidationError):
        JSON_CONVERTER.structure(body, Everything)


@settings(max_examples=200, deadline=None)
@given(st.timedeltas())
def test_every_written_duration_matches_the_pattern(value: datetime.timedelta) -> None:
    written = JSON_CONVERTER.unstructure(value)
    assert re.fullmatch(DURATION_PATTERN.strip("^$"), written)
    assert JSON_CONVERTER.structure(written, datetime.timedelta) == value
