"""Inline schemas: the value types that have no component of their own (scalars, enums,
literals), the keywords of annotated-types constraints, and defaults as JSON.

Each schema is what the JSON converter reads (``input``) or writes (``output``); where the
two differ (``Decimal``, ``timedelta``), each direction gets its own.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
import uuid
from typing import Any, Literal

from .._codec.constraints import constraints_of
from .._codec.convert import JSON_CONVERTER, literal_values
from .._codec.values import NUMBER

__all__ = ["Direction", "choices_schema", "constraint_keywords", "json_default", "scalar_schema"]

Direction = Literal["input", "output"]

#: What the converter reads as a ``Decimal`` from a string, and what it writes.
DECIMAL_PATTERN = f"^{NUMBER.pattern}$"
#: The ISO 8601 durations the converter reads and writes: weeks, days, hours, minutes and
#: seconds, a fraction on the seconds only, an optional sign (``PT1H30M``, ``-P2DT0.5S``).
DURATION_PATTERN = (
    r"^[+-]?P(?!$)(?:[0-9]+W)?(?:[0-9]+D)?"
    r"(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?$"
)

_DECIMAL_TEXT = {"type": "string", "format": "decimal", "pattern": DECIMAL_PATTERN}
_DURATION_TEXT = {"type": "string", "format": "duration", "pattern": DURATION_PATTERN}

_SAME_BOTH_WAYS: dict[type, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
}
_BY_DIRECTION: dict[type, dict[Direction, dict[str, Any]]] = {
    # read from a string (exact) or a number; written as a string
    decimal.Decimal: {
        "input": {"anyOf": [_DECIMAL_TEXT, {"type": "number"}]},
        "output": _DECIMAL_TEXT,
    },
    # read from a number of seconds or an ISO 8601 string; written as ISO 8601
    datetime.timedelta: {
        "input": {"anyOf": [{"type": "number"}, _DURATION_TEXT]},
        "output": _DURATION_TEXT,
    },
}


def _copy(schema: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(schema))  # type: ignore[no-any-return]


def scalar_schema(kind: Any, direction: Direction) -> dict[str, Any] | None:
    """A fresh schema of the scalar ``kind`` (``str`` ... ``timedelta``, ``None``), or
    ``None`` when ``kind`` is not one."""
    if kind in _SAME_BOTH_WAYS:
        return _copy(_SAME_BOTH_WAYS[kind])
    if kind in _BY_DIRECTION:
        return _copy(_BY_DIRECTION[kind][direction])
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else "string"


def choices_schema(kind: Any) -> dict[str, Any]:
    """``Enum`` (its members' values) or ``Literal[...]``: ``const`` for one value, else
    ``enum``; with ``type`` when every value has the same JSON type."""
    is_enum = isinstance(kind, type) and issubclass(kind, enum.Enum)
    choices: list[Any] = list(kind) if is_enum else literal_values(kind)
    values = list(dict.fromkeys(c.value if isinstance(c, enum.Enum) else c for c in choices))
    schema: dict[str, Any] = {"const": values[0]} if len(values) == 1 else {"enum": values}
    types = {_json_type(v) for v in values}
    if len(types) == 1:
        schema["type"] = types.pop()
    return schema


def _number(bound: Any) -> int | float | None:
    """A bound as a JSON number; ``None`` for one JSON Schema cannot compare (a date, a
    duration: the converter writes them as strings)."""
    if isinstance(bound, bool) or not isinstance(bound, int | float | decimal.Decimal):
        return None
    if isinstance(bound, decimal.Decimal):
        return int(bound) if bound == bound.to_integral_value() else float(bound)
    return bound if math.isfinite(bound) else None


_ORDER_KEYWORDS = [
    ("minimum", "minimum"),
    ("exclusive_minimum", "exclusiveMinimum"),
    ("maximum", "maximum"),
    ("exclusive_maximum", "exclusiveMaximum"),
    ("multiple_of", "multipleOf"),
]
_LENGTH_KEYWORDS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def constraint_keywords(kind: Any, shape: str | None) -> dict[str, Any]:
    """The JSON Schema keywords of the annotated-types constraints on ``Annotated[T, ...]``:
    numeric bounds (of numbers only), and the length bounds as the keywords of ``shape``
    (``"string"``, ``"array"`` or ``"object"``, the JSON form of ``T``). ``Predicate`` and
    bounds of dates, times and durations have no keyword and are left out."""
    bounds = constraints_of(kind)
    if bounds is None:
        return {}
    out: dict[str, Any] = {}
    for field, keyword in _ORDER_KEYWORDS:
        number = _number(getattr(bounds, field))
        if number is not None:
            out[keyword] = number
    if shape in _LENGTH_KEYWORDS:
        shortest, longest = _LENGTH_KEYWORDS[shape]
        if bounds.min_length is not None:
            out[shortest] = bounds.min_length
        if bounds.max_length is not None:
            out[longest] = bounds.max_length
    return out


def json_default(value: Any) -> tuple[bool, Any]:
    """``(True, json)``: ``value`` as the JSON converter writes it, or ``(False, None)`` when
    it has no JSON form (an object without a hook, a float that is not finite)."""
    try:
        written = JSON_CONVERTER.unstructure(value)
        return True, json.loads(json.dumps(written, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return False, None
