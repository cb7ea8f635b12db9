"""cattrs converters for extraction, built once, and error messages with locations.

Two converters: one for values that arrive as text (path segments, query strings, forms),
which parses strings strictly (``"1_000"`` is not an int, ``"nan"`` is not a float, booleans
have fixed spellings), and one for JSON, which checks types instead of coercing them (a
JSON ``"42"`` is not an int). Types JSON has no native form for (datetimes, UUIDs, ...) come
as strings in both, parsed by ``values``. ``Response.json`` writes with ``JSON_CONVERTER``'s
unstructure side, so every type it reads, it writes, and the other way round; ``path_for``
writes path parameters with ``TEXT_CONVERTER``'s (``to_text``), checked to read back equal.

Hooks are created once per type (cattrs caches them); the collection and record hooks
(``shapes``) check the JSON shape first, so a body of the wrong shape says ``expected a JSON
object`` instead of failing on each field. Messages come from ``describe_failure``, which
walks the failure down to each value that did not fit.
"""

from __future__ import annotations

import collections.abc as abc
import datetime
import decimal
import enum
import re
import typing
import uuid
from collections.abc import Callable
from typing import Any

import attrs
import cattrs

from . import constraints, pydantic_models, shapes, values
from .values import Choices, ExtractionValueError, NestedErrors

__all__ = ["JSON_CONVERTER", "STRING_VALUES", "TEXT_CONVERTER", "describe_failure", "to_text"]

_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits only
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})

Hook = Callable[[Any, Any], Any]


# cattrs dispatches an enum whose members are also ints, floats or strings (IntEnum, StrEnum,
# ``class Color(str, Enum)``) to the int, float or str hook: those hooks hand such a type on.
_TEXT_CHOICES: dict[type, Choices] = {}
_JSON_CHOICES: dict[type, Choices] = {}


def _text_choice(value: Any, kind: type) -> Any:
    choices = _TEXT_CHOICES.get(kind) or _TEXT_CHOICES.setdefault(kind, _choices(kind))
    return choices.from_text(value)


def _json_choice(value: Any, kind: type) -> Any:
    choices = _JSON_CHOICES.get(kind) or _JSON_CHOICES.setdefault(kind, _choices(kind))
    return choices.from_json(value)


def _text_int(value: Any, kind: type) -> int:
    if kind is not int:
        return _text_choice(value, kind)  # type: ignore[no-any-return]
    if isinstance(value, str) and _INT.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # over Python's digit limit
            raise ExtractionValueError("expected an integer (too many digits)") from None
    raise ExtractionValueError("expected an integer")


def _text_float(value: Any, kind: type) -> float:
    if kind is not float:
        return _text_choice(value, kind)  # type: ignore[no-any-return]
    if not (isinstance(value, str) and values.NUMBER.fullmatch(value)):
        raise ExtractionValueError("expected a number")
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ExtractionValueError("expected a finite number")
    return number


def _text_bool(value: Any, _: type) -> bool:
    text = str(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ExtractionValueError("expected a boolean (true/false, 1/0, yes/no, on/off)")


def _text_str(value: Any, kind: type) -> str:
    if kind is not str:
        return _text_choice(value, kind)  # type: ignore[no-any-return]
    if isinstance(value, str):
        return value
    raise ExtractionValueError("expected a string")


def _text_decimal(value: Any, _: type) -> decimal.Decimal:
    return values.parse_decimal(value)


def _text_duration(value: Any, _: type) -> datetime.timedelta:
    return values.parse_duration(value)


def _json_int(value: Any, kind: type) -> int:
    if type(value) is int and kind is int:
        return value
    if kind is not int:
        return _json_choice(value, kind)  # type: ignore[no-any-return]
    raise ExtractionValueError("expected an integer")


def _json_float(value: Any, kind: type) -> float:
    if type(value) in (int, float) and kind is float:
        return float(value)
    if kind is not float:
        return _json_choice(value, kind)  # type: ignore[no-any-return]
    raise ExtractionValueError("expected a number")


def _json_bool(value: Any, _: type) -> bool:
    if type(value) is bool:
        return value
    raise ExtractionValueError("expected a boolean")


def _json_str(value: Any, kind: type) -> str:
    if type(value) is str and kind is str:
        return value
    if kind is not str:
        return _json_choice(value, kind)  # type: ignore[no-any-return]
    raise ExtractionValueError("expected a string")


def _json_decimal(value: Any, _: type) -> decimal.Decimal:
    """A JSON string (exact) or number. The parser reads a JSON decimal as a binary float;
    its shortest repr (``0.1`` stays ``0.1``) is exact up to 15 significant digits."""
    kind = type(value)
    if kind is str:
        return values.parse_decimal(value)
    if kind is int:
        return decimal.Decimal(value)
    if kind is float:
        return decimal.Decimal(repr(value))
    raise ExtractionValueError(values.DECIMAL_EXPECTED)


def _json_duration(value: Any, _: type) -> datetime.timedelta:
    """Seconds as a JSON number, or a string (seconds or ISO 8601)."""
    kind = type(value)
    if kind is str:
        return values.parse_duration(value)
    if kind in (int, float):
        return values.seconds_to_duration(value)
    raise ExtractionValueError(values.DURATION_EXPECTED)


def _from_string(parse: Callable[[str], Any], expected: str) -> Hook:
    """A hook for a type that arrives as a string in text and in JSON alike."""

    def structure(value: Any, _: Any) -> Any:
        if type(value) is str:
            return parse(value)
        raise ExtractionValueError(expected)

    return structure


def _is_enum(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, enum.Enum)


def _is_literal(kind: Any) -> bool:
    return typing.get_origin(kind) is typing.Literal


def literal_values(kind: Any) -> list[Any]:
    """The values of ``Literal[...]``, nested ``Literal``s flattened."""
    out: list[Any] = []
    for arg in typing.get_args(kind):
        out.extend(literal_values(arg) if _is_literal(arg) else [arg])
    return out


def _choices(kind: Any) -> Choices:
    return Choices(list(kind) if _is_enum(kind) else literal_values(kind))


# -- the two converters ---------------------------------------------------------------------
#: The types that arrive as a string in text and in JSON alike: the parser of each and what
#: its message says is expected.
STRING_VALUES: list[tuple[type, Callable[[str], Any], str]] = [
    (datetime.datetime, values.parse_datetime, values.DATETIME_EXPECTED),
    (datetime.date, values.parse_date, values.DATE_EXPECTED),
    (datetime.time, values.parse_time, values.TIME_EXPECTED),
    (uuid.UUID, values.parse_uuid, values.UUID_EXPECTED),
]


def _make(scalars: dict[type, Hook], choice: Callable[[Choices], Hook]) -> cattrs.Converter:
    converter = cattrs.Converter(
        detailed_validation=True, unstruct_collection_overrides={abc.Set: list}
    )
    for kind, hook in scalars.items():
        converter.register_structure_hook(kind, hook)
    for kind, parse, expected in STRING_VALUES:
        converter.register_structure_hook(kind, _from_string(parse, expected))
    # Later registrations are tried first.
    converter.register_structure_hook_factory(shapes.is_sequence, shapes.sequence_hook)
    converter.register_structure_hook_factory(shapes.is_mapping, shapes.mapping_hook)
    converter.register_structure_hook_factory(shapes.is_record, shapes.record_hook)
    converter.register_structure_hook_factory(_is_enum, lambda k: choice(_choices(k)))
    converter.register_structure_hook_factory(_is_literal, lambda k: choice(_choices(k)))
    converter.register_structure_hook_factory(
        pydantic_models.is_model, pydantic_models.structure_hook
    )
    converter.register_structure_hook_factory(
        constraints.has_constraints, constraints.constrained_hook
    )
    return converter


TEXT_CONVERTER = _make(
    {
        int: _text_int,
        float: _text_float,
        bool: _text_bool,
        str: _text_str,
        decimal.Decimal: _text_decimal,
        datetime.timedelta: _text_duration,
    },
    lambda choices: choices.from_text,
)
JSON_CONVERTER = _make(
    {
        int: _json_int,
        float: _json_float,
        bool: _json_bool,
        str: _json_str,
        decimal.Decimal: _json_decimal,
        datetime.timedelta: _json_duration,
    },
    lambda choices: choices.from_json,
)


def _isoformat(value: datetime.date | datetime.time) -> str:
    return value.isoformat()  # a datetime's own method: the date's would drop the time


# What Response.json writes: the forms the hooks above read back.
JSON_CONVERTER.register_unstructure_hook(datetime.date, _isoformat)
JSON_CONVERTER.register_unstructure_hook(datetime.time, _isoformat)
JSON_CONVERTER.register_unstructure_hook(uuid.UUID, str)
JSON_CONVERTER.register_unstructure_hook(decimal.Decimal, str)
JSON_CONVERTER.register_unstructure_hook(datetime.timedelta, values.format_duration)
JSON_CONVERTER.register_unstructure_hook_factory(
    pydantic_models.is_model, pydantic_models.unstructure_hook
)


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


# What a path is written with (``path_for``): the spellings the text hooks above read back.
_TEXT_WRITERS: list[tuple[type, Callable[[Any], str]]] = [
    (bool, _bool_text),
    (int, str),
    (float, repr),
    (decimal.Decimal, str),
    (uuid.UUID, str),
    (datetime.date, _isoformat),
    (datetime.time, _isoformat),
    (datetime.timedelta, values.format_duration),
]
for _kind, _write in _TEXT_WRITERS:
    TEXT_CONVERTER.register_unstructure_hook(_kind, _write)


def to_text(value: Any, kind: Any) -> str:
    """The text ``TEXT_CONVERTER`` reads back as ``value`` when it reads a ``kind``: how a
    path parameter is written. An enum member is written as its value (as ``Choices`` spells
    it), before cattrs would take a ``str`` enum for a plain ``str``. ``ValueError`` saying
    why when the text does not read back equal (a value of another type, a float that is not
    finite, ...)."""
    try:
        written = TEXT_CONVERTER.unstructure(value.value if isinstance(value, enum.Enum) else value)
        text = written if isinstance(written, str) else str(written)
        back = TEXT_CONVERTER.structure(text, kind)
    except Exception as exc:
        raise ValueError(f"{value!r} is refused: {_reason(exc)}") from None
    if back != value:
        raise ValueError(f"{value!r} would be read back as {back!r}")
    return text


# -- messages -------------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    if isinstance(exc, ExtractionValueError):
        return str(exc)
    if isinstance(exc, KeyError):  # a field missing from a class
        return "required"
    return "invalid value"  # a failure no hook of ours raised (a union's members told apart)


def _validator_field(exc: BaseException, record: type) -> str | None:
    """The attribute whose attrs validator raised ``exc`` in ``record.__init__``: the
    validator is the function the initializer called, and attrs passes it the attribute.
    ``None`` for a failure of the record as a whole (``__post_init__``,
    ``__attrs_post_init__``)."""
    init = getattr(getattr(record, "__init__", None), "__code__", None)
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not init:
        tb = tb.tb_next
    if tb is None or tb.tb_next is None or not attrs.has(record):
        return None
    names = {field.name for field in attrs.fields(record)}
    for value in tb.tb_next.tb_frame.f_locals.values():
        if isinstance(value, attrs.Attribute) and value.name in names:
            return value.name
    return None


def _refusal(exc: BaseException) -> str:
    """Why a record's initializer refused its values: a ``ValueError``'s or ``TypeError``'s
    message (attrs adds the attribute and the value after it)."""
    if isinstance(exc, ValueError | TypeError) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0] or "invalid value"
    return "invalid value"


def _describe(exc: BaseException, where: str, out: list[str]) -> None:
    """Collections raise ``NestedErrors`` (``shapes``), records cattrs's
    ``ClassValidationError``; each names where its inner failures sit. A record's failure
    without a field is its initializer's (a validator, ``__post_init__``)."""
    if isinstance(exc, NestedErrors):
        for suffix, inner in exc.failures:
            _describe(inner, where + suffix, out)
    elif isinstance(exc, cattrs.ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            _describe(inner, f"{where}.{note.name}", out)
        for inner in without:
            field = _validator_field(inner, exc.cl)
            out.append(f"{where}{'.' + field if field else ''}: {_refusal(inner)}")
    else:
        out.append(f"{where}: {_reason(exc)}")


def describe_failure(exc: BaseException, location: str) -> list[str]:
    """``["query.page: expected an integer", ...]`` for a structuring failure."""
    out: list[str] = []
    _describe(exc, location, out)
    return out
