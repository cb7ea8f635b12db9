"""Constraints from ``annotated-types`` (``Annotated[int, Ge(1), Le(100)]``): read into a
normalized ``Bounds``, checked after a value is converted, and matched against the type they
constrain by the startup check.

``Gt``, ``Ge``, ``Lt``, ``Le`` and ``Interval`` bound numbers (``int``, ``float``,
``Decimal``) and the date and time types; ``MultipleOf`` bounds numbers; ``MinLen``,
``MaxLen`` and ``Len`` bound strings, collections and dicts; ``Predicate(f)`` applies to any
type. A type without constraints gets no hook from here: its conversion is unchanged.
"""

from __future__ import annotations

import datetime
import decimal
import math
import typing
from collections.abc import Callable, Iterator
from typing import Any

import annotated_types as at
import attrs
import cattrs

from .values import ExtractionValueError, format_duration

__all__ = [
    "Bounds",
    "constrained",
    "constrained_hook",
    "constraint_items",
    "constraints_of",
    "has_constraints",
    "mentions_constraints",
    "metadata_problem",
]

_SUPPORTED = (at.Gt, at.Ge, at.Lt, at.Le, at.MinLen, at.MaxLen, at.MultipleOf, at.Predicate)


@attrs.frozen
class Bounds:
    """The constraints of an annotated type, normalized: where one is given twice, the
    tighter bound. Unset bounds are ``None``; ``predicates`` are the ``Predicate``
    functions, in order. The names are JSON Schema's."""

    minimum: Any = None
    exclusive_minimum: Any = None
    maximum: Any = None
    exclusive_maximum: Any = None
    multiple_of: Any = None
    min_length: int | None = None
    max_length: int | None = None
    predicates: tuple[Callable[[Any], Any], ...] = ()


def _flatten(metadata: tuple[Any, ...]) -> Iterator[Any]:
    """The annotated-types constraints among ``metadata``, ``Interval`` and ``Len`` (any
    ``GroupedMetadata``) unpacked; other metadata (markers, docs) is left out."""
    for item in metadata:
        if isinstance(item, at.BaseMetadata):
            yield item
        elif isinstance(item, at.GroupedMetadata):
            yield from (inner for inner in item if isinstance(inner, at.BaseMetadata))


def constraint_items(kind: Any) -> tuple[Any, ...]:
    """The annotated-types items of ``Annotated[T, ...]`` (``Interval`` and ``Len``
    unpacked), supported or not; ``()`` for any other type."""
    if typing.get_origin(kind) is typing.Annotated:
        return tuple(_flatten(kind.__metadata__))
    return ()


def has_constraints(kind: Any) -> bool:
    """``kind`` is ``Annotated[T, ...]`` with at least one constraint this module checks."""
    return any(isinstance(item, _SUPPORTED) for item in constraint_items(kind))


def mentions_constraints(kind: Any) -> bool:
    """``kind`` or a type inside it (``list[Annotated[int, Ge(0)]]``) has constraints."""
    return has_constraints(kind) or any(mentions_constraints(a) for a in typing.get_args(kind))


_FIELD_OF: dict[type, Callable[[Any], tuple[str, Any, Callable[[Any, Any], Any]]]] = {
    at.Ge: lambda c: ("minimum", c.ge, max),
    at.Gt: lambda c: ("exclusive_minimum", c.gt, max),
    at.Le: lambda c: ("maximum", c.le, min),
    at.Lt: lambda c: ("exclusive_maximum", c.lt, min),
    at.MinLen: lambda c: ("min_length", c.min_length, max),
    at.MaxLen: lambda c: ("max_length", c.max_length, min),
    # two different steps cannot be merged: metadata_problem refuses them
    at.MultipleOf: lambda c: ("multiple_of", c.multiple_of, lambda _old, new: new),
}


def constrained(annotation: Any) -> Any:
    """``T`` of ``Annotated[T, marker, ...]`` with the constraints written beside the marker
    kept on it (``Path[Annotated[int, Ge(1)]]`` is ``Annotated[int, Ge(1), PATH]``), or
    ``T`` itself when there are none."""
    kind = typing.get_args(annotation)[0]
    items = constraint_items(annotation)
    return typing.Annotated[(kind, *items)] if items else kind


def _tighter(old: Any, new: Any, pick: Callable[[Any, Any], Any]) -> Any:
    return new if old is None else pick(old, new)


def constraints_of(kind: Any) -> Bounds | None:
    """The ``Bounds`` of ``Annotated[T, ...]`` (the metadata of that one level), or ``None``
    when it has no constraints. Metadata that is not an annotated-types constraint (an
    extractor's marker, a description) is skipped."""
    found = [item for item in constraint_items(kind) if isinstance(item, _SUPPORTED)]
    if not found:
        return None
    values: dict[str, Any] = {}
    for item in found:
        if isinstance(item, at.Predicate):
            values["predicates"] = (*values.get("predicates", ()), item.func)
            continue
        name, bound, pick = _FIELD_OF[type(item)](item)
        values[name] = _tighter(values.get(name), bound, pick)
    return Bounds(**values)


# -- the startup check's part ---------------------------------------------------------------
_NAMES = "Gt, Ge, Lt, Le, Interval, MultipleOf, MinLen, MaxLen, Len, Predicate"


def metadata_problem(kind: Any) -> str | None:
    """What is wrong with the constraints of ``Annotated[T, ...]`` whatever ``T`` is: an
    annotated-types constraint trioframe does not check, one that is not hashable
    (``Predicate(Not(f))``), two different ``MultipleOf``, a step that is not positive."""
    steps = set()
    for item in constraint_items(kind):
        if not isinstance(item, _SUPPORTED):
            return f"{item!r} is not supported (annotated-types constraints that are: {_NAMES})"
        try:
            hash(item)
        except TypeError:  # cattrs finds hooks by type: the type must be hashable
            return f"{item!r} is not hashable"
        if isinstance(item, at.MultipleOf):
            step = item.multiple_of
            if isinstance(step, bool) or not isinstance(step, int | float | decimal.Decimal):
                return f"{item!r}: the step must be a number"
            if not step > 0:
                return f"{item!r}: the step must be positive"
            steps.add(step)
    if len(steps) > 1:
        return f"two different MultipleOf steps ({', '.join(map(str, sorted(steps)))})"
    return None


# -- per value ------------------------------------------------------------------------------
#: (passes, reason): whether a value passes one bound, and the reason when it does not.
Test = tuple[Callable[[Any], bool], Callable[[Any], str]]


def _shown(bound: Any) -> str:
    if isinstance(bound, datetime.timedelta):
        return format_duration(bound)
    if isinstance(bound, datetime.date | datetime.time):
        return bound.isoformat()
    return str(bound)


def _length(words: str, count: int, value: Any) -> str:
    """``must be at most 20 characters long`` for a string, ``must have at least 3 items``
    for a collection or a dict."""
    plural = "s" * (count != 1)
    if isinstance(value, str):
        return f"must be {words} {count} character{plural} long"
    return f"must have {words} {count} item{plural}"


def _is_multiple(value: Any, step: Any) -> bool:
    if isinstance(value, float) or isinstance(step, float):
        # within rounding, of the step and of the value: 0.3 is a multiple of 0.1
        tolerance = abs(step) * 1e-9 + abs(value) * 1e-15
        return bool(abs(math.remainder(value, step)) <= tolerance)
    try:
        return bool(value % step == 0)
    except decimal.InvalidOperation:  # a quotient beyond the decimal context's precision
        return False


def _fixed(text: str) -> Callable[[Any], str]:
    return lambda _: text


def _order_tests(bounds: Bounds) -> Iterator[Test]:
    low, above = bounds.minimum, bounds.exclusive_minimum
    high, below = bounds.maximum, bounds.exclusive_maximum
    if low is not None:
        yield (lambda v: v >= low), _fixed(f"must be at least {_shown(low)}")
    if above is not None:
        yield (lambda v: v > above), _fixed(f"must be greater than {_shown(above)}")
    if high is not None:
        yield (lambda v: v <= high), _fixed(f"must be at most {_shown(high)}")
    if below is not None:
        yield (lambda v: v < below), _fixed(f"must be less than {_shown(below)}")


def _other_tests(bounds: Bounds) -> Iterator[Test]:
    step, shortest, longest = bounds.multiple_of, bounds.min_length, bounds.max_length
    if step is not None:
        yield (lambda v: _is_multiple(v, step)), _fixed(f"must be a multiple of {_shown(step)}")
    if shortest is not None:
        yield (lambda v: len(v) >= shortest), (lambda v: _length("at least", shortest, v))
    if longest is not None:
        yield (lambda v: len(v) <= longest), (lambda v: _length("at most", longest, v))
    for func in bounds.predicates:
        name = getattr(func, "__name__", None) or repr(func)
        yield func, _fixed(f"must satisfy {name}")


def constrained_hook(kind: Any, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """The structure hook of ``Annotated[T, constraints...]``: ``T``'s hook, then each
    constraint on the result (``None``, for ``T | None``, is not checked). The first that
    fails raises ``ExtractionValueError`` with its reason (``must be at most 100``)."""
    base = typing.get_args(kind)[0]
    hook = converter.get_structure_hook(base)
    bounds = constraints_of(kind)
    assert bounds is not None
    tests = [*_order_tests(bounds), *_other_tests(bounds)]

    def structure(value: Any, _: Any) -> Any:
        result = hook(value, base)
        if result is not None:
            for passes, reason in tests:
                try:
                    passed = passes(result)
                except Exception:  # a naive datetime against an aware bound (they do not
                    passed = False  # compare), a predicate that cannot take the value
                if not passed:
                    raise ExtractionValueError(reason(result))
        return result

    return structure
