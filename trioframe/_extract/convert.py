"""cattrs converters for extraction, built once, and error messages with locations.

Two converters: one for values that arrive as text (path segments, query strings, forms),
which parses strings strictly (``"1_000"`` is not an int, ``"nan"`` is not a float, booleans
have fixed spellings), and one for JSON, which checks types instead of coercing them (a
JSON ``"42"`` is not an int).
"""

from __future__ import annotations

import re
from typing import Any

import cattrs

__all__ = ["JSON_CONVERTER", "TEXT_CONVERTER", "describe_failure"]

_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits only
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class ExtractionValueError(ValueError):
    """A value that does not fit its type; the message is the user-facing reason."""


def _text_int(value: Any, _: type) -> int:
    if isinstance(value, str) and _INT.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # over Python's digit limit
            raise ExtractionValueError("expected an integer (too many digits)") from None
    raise ExtractionValueError("expected an integer")


def _text_float(value: Any, _: type) -> float:
    if not (isinstance(value, str) and _FLOAT.fullmatch(value)):
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


def _text_str(value: Any, _: type) -> str:
    if isinstance(value, str):
        return value
    raise ExtractionValueError("expected a string")


def _json_int(value: Any, _: type) -> int:
    if type(value) is int:
        return value
    raise ExtractionValueError("expected an integer")


def _json_float(value: Any, _: type) -> float:
    if type(value) in (int, float):
        return float(value)
    raise ExtractionValueError("expected a number")


def _json_bool(value: Any, _: type) -> bool:
    if type(value) is bool:
        return value
    raise ExtractionValueError("expected a boolean")


def _json_str(value: Any, _: type) -> str:
    if type(value) is str:
        return value
    raise ExtractionValueError("expected a string")


def _make(int_hook: Any, float_hook: Any, bool_hook: Any, str_hook: Any) -> cattrs.Converter:
    converter = cattrs.Converter(detailed_validation=True)
    converter.register_structure_hook(int, int_hook)
    converter.register_structure_hook(float, float_hook)
    converter.register_structure_hook(bool, bool_hook)
    converter.register_structure_hook(str, str_hook)
    return converter


TEXT_CONVERTER = _make(_text_int, _text_float, _text_bool, _text_str)
JSON_CONVERTER = _make(_json_int, _json_float, _json_bool, _json_str)


def _format(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, ExtractionValueError):
        return str(exc)
    if isinstance(exc, KeyError):
        return "required"
    name = getattr(type_, "__name__", None) or str(type_)
    if isinstance(exc, ValueError) and type_ is int:
        return "expected an integer"
    return f"expected {name}"


def describe_failure(exc: BaseException, location: str) -> list[str]:
    """``["query.page: expected an integer", ...]`` for a cattrs structuring failure."""
    messages = cattrs.transform_error(exc, path=location, format_exception=_format)
    out: list[str] = []
    for message in messages:
        reason, _, where = message.rpartition(" @ ")
        out.append(f"{where}: {reason}")
    return out
