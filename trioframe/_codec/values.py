"""Strict parsers for the value types that JSON has no native form for, and the choices of
an ``Enum`` or a ``Literal``, shared by the text and the JSON converter.

Each parser takes a ``str`` and returns the value or raises ``ExtractionValueError`` with the
user-facing reason. The accepted spellings are deliberately narrow (ASCII digits, ISO 8601's
extended format) so that a value means one thing; what ``Response.json`` writes is always
among them, so a value written by an API reads back equal.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import re
import uuid
from collections.abc import Iterable
from typing import Any

__all__ = [
    "Choices",
    "ExtractionValueError",
    "NestedErrors",
    "format_duration",
    "parse_date",
    "parse_datetime",
    "parse_decimal",
    "parse_duration",
    "parse_time",
    "parse_uuid",
]


class ExtractionValueError(ValueError):
    """A value that does not fit its type; the message is the user-facing reason."""


class NestedErrors(ValueError):
    """The failures inside a collection or a model: ``(location suffix, exception)`` pairs,
    the suffix being ``[0]``, ``['key']`` or ``.name``."""

    def __init__(self, failures: list[tuple[str, BaseException]]) -> None:
        super().__init__(f"{len(failures)} invalid values")
        self.failures = failures


#: A decimal number in ASCII: optional sign, digits with an optional fraction, an exponent.
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_TIME = r"[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
_OFFSET = r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(rf"[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[Tt ]{_TIME}{_OFFSET}")
_TIME_OF_DAY = re.compile(rf"{_TIME}{_OFFSET}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# ISO 8601 durations without years and months (their length varies): weeks, days, hours,
# minutes, seconds; only the seconds may have a fraction.
_DURATION = re.compile(
    r"(?P<sign>[+-]?)P(?:(?P<weeks>[0-9]+)W)?(?:(?P<days>[0-9]+)D)?"
    r"(?:T(?=[0-9])(?:(?P<hours>[0-9]+)H)?(?:(?P<minutes>[0-9]+)M)?"
    r"(?:(?P<seconds>[0-9]+)(?:\.(?P<fraction>[0-9]+))?S)?)?"
)

_new_object = object.__new__
_set_attribute = object.__setattr__
_SAFETY_UNKNOWN = uuid.SafeUUID.unknown

DATETIME_EXPECTED = "expected an ISO 8601 datetime"
DATE_EXPECTED = "expected an ISO 8601 date (YYYY-MM-DD)"
TIME_EXPECTED = "expected an ISO 8601 time"
DURATION_EXPECTED = "expected a duration (seconds, or ISO 8601 such as 'PT1H30M')"
DECIMAL_EXPECTED = "expected a decimal number"
UUID_EXPECTED = "expected a UUID"


def parse_datetime(text: str) -> datetime.datetime:
    """``2024-05-01T12:30:00``, with seconds, a fraction, ``Z`` or ``+02:00`` optional."""
    if _DATETIME.fullmatch(text):
        try:
            return datetime.datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:  # a day or an hour out of range
            pass
    raise ExtractionValueError(DATETIME_EXPECTED)


def parse_date(text: str) -> datetime.date:
    """``2024-05-01``."""
    if _DATE.fullmatch(text):
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            pass
    raise ExtractionValueError(DATE_EXPECTED)


def parse_time(text: str) -> datetime.time:
    """``12:30``, with seconds, a fraction, ``Z`` or an offset optional."""
    if _TIME_OF_DAY.fullmatch(text):
        try:
            return datetime.time.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            pass
    raise ExtractionValueError(TIME_EXPECTED)


def parse_uuid(text: str) -> uuid.UUID:
    """The hyphenated form, ``12345678-1234-5678-1234-567812345678``, either letter case."""
    if _UUID.fullmatch(text):
        # What ``uuid.UUID(text)`` sets, from the digits the pattern has checked: its
        # initializer's spellings and arguments cost more than the number itself.
        value = _new_object(uuid.UUID)
        _set_attribute(value, "int", int(text.replace("-", ""), 16))
        _set_attribute(value, "is_safe", _SAFETY_UNKNOWN)
        return value
    raise ExtractionValueError(UUID_EXPECTED)


def parse_decimal(text: str) -> decimal.Decimal:
    """ASCII decimal or exponent notation; ``NaN`` and the infinities are refused."""
    if NUMBER.fullmatch(text):
        try:
            return decimal.Decimal(text)
        except decimal.InvalidOperation:  # an exponent beyond the decimal context's range
            pass
    raise ExtractionValueError(DECIMAL_EXPECTED)


def seconds_to_duration(seconds: float) -> datetime.timedelta:
    """A finite number of seconds as a ``timedelta``."""
    try:
        return datetime.timedelta(seconds=seconds)
    except (OverflowError, ValueError):  # out of timedelta's range, or not finite
        raise ExtractionValueError(DURATION_EXPECTED + ", within 999999999 days") from None


def parse_duration(text: str) -> datetime.timedelta:
    """Seconds (``90``, ``1.5``) or an ISO 8601 duration (``PT1H30M``, ``-P2DT0.5S``)."""
    if NUMBER.fullmatch(text):
        return seconds_to_duration(float(text))
    found = _DURATION.fullmatch(text)
    if found is None or text.endswith(("P", "T")):
        raise ExtractionValueError(DURATION_EXPECTED)
    parts = {name: int(value or 0) for name, value in found.groupdict().items() if name != "sign"}
    parts["microseconds"] = int((found["fraction"] or "0")[:6].ljust(6, "0"))
    del parts["fraction"]
    try:
        duration = datetime.timedelta(**parts)
    except OverflowError:
        raise ExtractionValueError(DURATION_EXPECTED + ", within 999999999 days") from None
    return -duration if found["sign"] == "-" else duration


def format_duration(duration: datetime.timedelta) -> str:
    """The ISO 8601 form ``parse_duration`` reads back exactly: ``PT1H30M``, ``-P2DT0.5S``,
    ``PT0S``."""
    sign = "-" if duration < datetime.timedelta(0) else ""
    duration = abs(duration)
    hours, rest = divmod(duration.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    days = f"{duration.days}D" if duration.days else ""
    clock = f"{hours}H" if hours else ""
    clock += f"{minutes}M" if minutes else ""
    if duration.microseconds:
        clock += f"{seconds}.{duration.microseconds:06d}".rstrip("0") + "S"
    elif seconds or not (days or clock):
        clock += f"{seconds}S"
    return f"{sign}P{days}" + (f"T{clock}" if clock else "")


def _json_form(value: Any) -> Any:
    """What a choice looks like in JSON: an enum member by its value."""
    return value.value if isinstance(value, enum.Enum) else value


def _text_form(value: Any) -> str:
    """How a choice is spelled in a path, query or form."""
    value = _json_form(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shown(value: Any) -> str:
    value = _json_form(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else repr(value)


#: Choices listed in a message at most; more are summarised.
_SHOWN_CHOICES = 10


class Choices:
    """The allowed values of an ``Enum`` (its members, by value) or a ``Literal``, looked up
    in one dictionary: by ``(type, value)`` for JSON, so ``"1"``, ``1.0`` and ``true`` are
    not ``1``; by spelling for text."""

    def __init__(self, allowed: Iterable[Any]) -> None:
        allowed = list(allowed)
        self.by_json = {(type(_json_form(a)), _json_form(a)): a for a in allowed}
        self.by_text = {_text_form(a): a for a in allowed}
        shown = ", ".join(_shown(a) for a in allowed[:_SHOWN_CHOICES])
        more = len(allowed) - _SHOWN_CHOICES
        self.expected = f"expected one of {shown}" + (f" (or {more} more)" if more > 0 else "")

    def from_json(self, value: Any, _: Any = None) -> Any:
        """The choice whose JSON form is ``value``."""
        try:
            return self.by_json[type(value), value]
        except (KeyError, TypeError):  # TypeError: an unhashable list or object
            raise ExtractionValueError(self.expected) from None

    def from_text(self, value: Any, _: Any = None) -> Any:
        """The choice spelled ``value``."""
        try:
            return self.by_text[value]
        except (KeyError, TypeError):
            raise ExtractionValueError(self.expected) from None
