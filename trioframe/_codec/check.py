"""The startup check: prove, when a handler is planned, that the converters can produce its
``Path[T]``, ``Query[T]``, ``Json[T]`` or ``Form[T]``.

The annotation is walked down to its leaves; a leaf no hook handles, a ``dict`` whose keys
are not strings, or (for text sources) a value text cannot hold raises ``UnsupportedType``
naming the type and where it sits (``Order.items[].extra``). So a handler never starts that
would fail every request.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import types
import typing
import uuid
from typing import Any

import annotated_types as at
import attrs

from . import pydantic_models
from .constraints import constraint_items, metadata_problem
from .convert import JSON_CONVERTER, literal_values
from .shapes import is_fixed_tuple, is_mapping, is_record, is_sequence

__all__ = [
    "UnsupportedType",
    "check_fields",
    "check_json",
    "check_path",
    "check_value",
    "type_name",
    "unwrap",
]

#: The leaf types both converters read (besides enums, literals and ``Any``).
SCALARS = frozenset(
    {
        str,
        int,
        float,
        bool,
        decimal.Decimal,
        uuid.UUID,
        datetime.datetime,
        datetime.date,
        datetime.time,
        datetime.timedelta,
    }
)
_CHOICE_TYPES = (str, int, float, bool, type(None))
_NUMBERS = frozenset({int, float, decimal.Decimal})
#: What an order constraint (``Ge``, ...) bounds, besides numbers; its bound has the same type.
_MOMENTS = frozenset({datetime.datetime, datetime.date, datetime.time, datetime.timedelta})
_BOUND = {at.Gt: "gt", at.Ge: "ge", at.Lt: "lt", at.Le: "le"}
_WRAPPERS = frozenset({typing.Required, typing.NotRequired, typing.ClassVar})


class UnsupportedType(Exception):
    """An annotation the converters cannot produce; the message says which part and why."""


def type_name(kind: Any) -> str:
    """``Order``, ``list[int]``, ``complex``: a type as a person writes it."""
    if isinstance(kind, type) and not typing.get_args(kind):
        return kind.__qualname__
    return repr(kind).replace("typing.", "")


def unwrap(kind: Any) -> Any:
    """Strip ``Annotated``, ``NewType``, ``Required``/``NotRequired``: what is converted."""
    while True:
        if typing.get_origin(kind) is typing.Annotated or typing.get_origin(kind) in _WRAPPERS:
            kind = typing.get_args(kind)[0]
        elif isinstance(kind, typing.NewType):
            kind = kind.__supertype__
        else:
            return kind


def _members(kind: Any) -> tuple[Any, ...] | None:
    """The members of a union, or ``None`` when ``kind`` is not one."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return typing.get_args(kind)
    return None


def _leaf_problem(kind: Any) -> str | None:
    """Why the leaf ``kind`` cannot be converted, or ``None`` when it can."""
    if kind is Any or kind in SCALARS:
        return None
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = [member.value for member in kind]
    elif typing.get_origin(kind) is typing.Literal:
        values = [getattr(v, "value", v) for v in literal_values(kind)]
    else:
        return f"no converter for {type_name(kind)}"
    if all(isinstance(v, _CHOICE_TYPES) for v in values):
        return None
    return f"{type_name(kind)} has values that are not strings, numbers, booleans or None"


def _record_fields(kind: type) -> dict[str, Any]:
    """The annotations of the fields a record is built from (``init=False`` ones are not)."""
    try:
        hints = typing.get_type_hints(kind, include_extras=True)
    except Exception as exc:
        raise UnsupportedType(
            f"cannot resolve the annotations of {type_name(kind)}: {exc}"
        ) from None
    if attrs.has(kind):
        names = [f.name for f in attrs.fields(kind) if f.init]
    elif dataclasses.is_dataclass(kind):
        names = [f.name for f in dataclasses.fields(kind) if f.init]
    else:  # a TypedDict
        names = list(hints)
        _check_typeddict_keys(kind, hints)
    return {name: hints.get(name, Any) for name in names}


def _at(where: str, problem: str) -> str:
    return f"{problem} (at {where})" if where else problem


def _misfit(item: Any, leaf: Any) -> str | None:
    """Why the constraint ``item`` cannot apply to the (unwrapped) type ``leaf``."""
    name = type_name(leaf)
    if type(item) in _BOUND:
        if leaf not in _NUMBERS and leaf not in _MOMENTS:
            return f"{item!r} applies to numbers, dates, times and durations, not to {name}"
        bound = getattr(item, _BOUND[type(item)])
        fits = (
            isinstance(bound, int | float | decimal.Decimal) and not isinstance(bound, bool)
            if leaf in _NUMBERS
            else type(bound) is leaf  # a datetime is a date, but the two do not compare
        )
        if not fits:
            return f"{item!r} cannot bound {name}: its bound is a {type(bound).__name__}"
    elif isinstance(item, at.MultipleOf):
        if leaf not in _NUMBERS:
            return f"{item!r} applies to numbers, not to {name}"
        if leaf is decimal.Decimal and isinstance(item.multiple_of, float):
            return f"{item!r} cannot apply to Decimal: its step is a float"
    elif isinstance(item, at.MinLen | at.MaxLen) and not (
        leaf is str or is_sequence(leaf) or is_mapping(leaf)
    ):
        return f"{item!r} applies to strings, collections and dicts, not to {name}"
    return None


def _check_constraints(kind: Any, where: str) -> None:
    """The annotated-types constraints on ``kind`` are supported and fit the type they
    constrain (each member but ``None`` of a union)."""
    while typing.get_origin(kind) in _WRAPPERS:
        kind = typing.get_args(kind)[0]
    items = constraint_items(kind)
    if not items:
        return
    base = unwrap(kind)
    members = [unwrap(m) for m in _members(base) or (base,) if m is not type(None)]
    misfits = (_misfit(item, member) for item in items for member in members)
    problem = metadata_problem(kind) or next((m for m in misfits if m is not None), None)
    if problem is not None:
        raise UnsupportedType(_at(where, problem))


def _check_typeddict_keys(kind: Any, hints: dict[str, Any]) -> None:
    """Python 3.11 decides which keys a TypedDict requires when the class is created, before a
    string annotation (``from __future__ import annotations``) is resolved: a
    ``NotRequired[X]`` written as a string would be required all the same."""
    for name, hint in hints.items():
        wrapper = typing.get_origin(hint)
        if (wrapper is typing.NotRequired and name in kind.__required_keys__) or (
            wrapper is typing.Required and name in kind.__optional_keys__
        ):
            written = "NotRequired" if wrapper is typing.NotRequired else "Required"
            raise UnsupportedType(
                f"{type_name(kind)}.{name}: this Python does not see {written}[...] "
                "in a string annotation (from __future__ import annotations); declare the "
                "optional keys in a TypedDict with total=False instead"
            )


def _walk_json(kind: Any, where: str, seen: set[Any]) -> None:
    _check_constraints(kind, where)
    kind = unwrap(kind)
    members = _members(kind)
    if members is not None:
        rest = [m for m in members if m is not type(None)]
        for member in rest:
            _walk_json(member, where, seen)
        if len(rest) > 1:
            if not all(is_record(unwrap(m)) or pydantic_models.is_model(m) for m in rest):
                raise UnsupportedType(
                    _at(
                        where,
                        f"the union {type_name(kind)} is ambiguous; only X | None and unions "
                        "of attrs classes or dataclasses are converted",
                    )
                )
            try:
                JSON_CONVERTER.get_structure_hook(kind)
            except Exception as exc:
                raise UnsupportedType(
                    _at(where, f"cannot tell the members of {type_name(kind)} apart: {exc}")
                ) from None
        return
    if pydantic_models.is_model(kind):
        return  # pydantic checked the model's fields when the class was created
    if is_sequence(kind):
        for item in typing.get_args(kind):
            if item is not Ellipsis:
                _walk_json(item, f"{where}[]", seen)
        return
    if is_mapping(kind):
        args = typing.get_args(kind)
        if args:
            key = unwrap(args[0])
            if key is not str and key is not Any:
                raise UnsupportedType(
                    _at(
                        where,
                        "dict keys must be str (JSON object keys are strings), "
                        f"not {type_name(args[0])}",
                    )
                )
            _walk_json(args[1], f"{where}[]", seen)
        return
    if is_record(kind):
        if kind not in seen:  # a recursive class is walked once
            seen.add(kind)
            for name, field in _record_fields(kind).items():
                _walk_json(field, f"{where}.{name}" if where else name, seen)
        return
    problem = _leaf_problem(kind)
    if problem is not None:
        raise UnsupportedType(_at(where, problem))


def check_json(kind: Any) -> None:
    """``Json[kind]`` can be structured, at every depth."""
    _walk_json(kind, type_name(kind) if is_record(kind) else "", set())


def _check_text_leaf(kind: Any, where: str, source: str) -> None:
    """A value read from one piece of text: a scalar, an enum, a literal, ``X | None``."""
    _check_constraints(kind, where)
    kind = unwrap(kind)
    members = _members(kind)
    if members is not None:
        rest = [m for m in members if m is not type(None)]
        if len(rest) == 1:
            _check_text_leaf(rest[0], where, source)
            return
    problem = _leaf_problem(kind)
    if problem is None:
        return
    if problem.startswith("no converter") and (
        members is not None or is_sequence(kind) or is_mapping(kind) or is_record(kind)
    ):
        problem = f"a {source} value is one piece of text; it cannot hold {type_name(kind)}"
    raise UnsupportedType(_at(where, problem))


def check_path(kind: Any) -> None:
    """``Path[kind]``: a text leaf, a tuple or list of them, or a record of them. A
    constrained ``kind`` is one parameter's value, so a text leaf."""
    if constraint_items(kind):
        _check_text_leaf(kind, "", "path")
        return
    kind = unwrap(kind)
    if is_record(kind):
        for name, field in _record_fields(kind).items():
            _check_text_leaf(field, f"{type_name(kind)}.{name}", "path")
    elif is_sequence(kind):
        for item in typing.get_args(kind):
            if item is not Ellipsis:
                _check_text_leaf(item, f"{type_name(kind)}[]", "path")
    elif not pydantic_models.is_model(kind):
        _check_text_leaf(kind, "", "path")


def check_value(kind: Any, source: str) -> None:
    """One query key, header or cookie: a text leaf, or a flat collection of them (every
    value of a repeated key), either of them optional (``X | None``)."""
    kind = unwrap(kind)
    members = _members(kind)
    if members is not None:
        rest = [m for m in members if m is not type(None)]
        if len(rest) == 1:
            kind = unwrap(rest[0])
    if is_sequence(kind) and not is_fixed_tuple(kind):
        kind = (typing.get_args(kind) or (Any,))[0]
    _check_text_leaf(kind, "", source)


def check_fields(kind: Any, source: str) -> None:
    """``Query[kind]`` or ``Form[kind]``: a record whose fields are text leaves or flat
    collections of them (repeated keys), or ``dict[str, leaf]``."""
    kind = unwrap(kind)
    if is_mapping(kind):
        args = typing.get_args(kind)
        if args:
            if unwrap(args[0]) not in (str, Any):
                raise UnsupportedType(f"{source} keys are str, not {type_name(args[0])}")
            _check_text_leaf(args[1], f"{type_name(kind)}[]", source)
    elif is_record(kind):
        for name, field in _record_fields(kind).items():
            where = f"{type_name(kind)}.{name}"
            inner = unwrap(field)
            if is_sequence(inner) and not is_fixed_tuple(inner):
                _check_constraints(field, where)
                for item in typing.get_args(inner)[:1]:
                    _check_text_leaf(item, f"{where}[]", source)
            else:
                _check_text_leaf(field, where, source)
