"""Structure hooks for collections and records that check the JSON shape first, and the
predicates that recognise those types (shared with the startup check).

A list, tuple or set field needs a JSON array, a dict or a record a JSON object: anything
else fails once with ``expected a JSON array`` / ``expected a JSON object`` instead of
iterating a string's characters or failing on every field. On success each hook makes one
pass; only after a failure are the items converted again one by one, to name each that
failed (``[1]``, ``['key']``).
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import typing
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override
from cattrs.gen.typeddicts import make_dict_structure_fn as make_typeddict_structure_fn

from .constraints import mentions_constraints
from .values import ExtractionValueError, NestedErrors

__all__ = [
    "ARRAY_EXPECTED",
    "OBJECT_EXPECTED",
    "is_fixed_tuple",
    "is_mapping",
    "is_record",
    "is_sequence",
    "mapping_hook",
    "record_hook",
    "sequence_hook",
]

OBJECT_EXPECTED = "expected a JSON object"
ARRAY_EXPECTED = "expected a JSON array"

Hook = Callable[[Any, Any], Any]

_SEQUENCES: dict[Any, Callable[[Iterable[Any]], Any]] = {
    list: list,
    abc.Sequence: list,
    abc.MutableSequence: list,
    tuple: tuple,
    set: set,
    abc.Set: set,
    abc.MutableSet: set,
    frozenset: frozenset,
}
_MAPPINGS = frozenset({dict, abc.Mapping, abc.MutableMapping})


def _origin(kind: Any) -> Any:
    return typing.get_origin(kind) or kind


def is_sequence(kind: Any) -> bool:
    """``list``, ``tuple``, ``set``, ``frozenset`` (or their abstract forms), with or without
    item types."""
    try:
        return _origin(kind) in _SEQUENCES
    except TypeError:  # an unhashable annotation
        return False


def is_mapping(kind: Any) -> bool:
    """``dict`` or ``Mapping``, with or without key and value types."""
    try:
        return _origin(kind) in _MAPPINGS
    except TypeError:
        return False


def is_fixed_tuple(kind: Any) -> bool:
    """``tuple[A, B]`` (not ``tuple[A, ...]`` nor a bare ``tuple``)."""
    args = typing.get_args(kind)
    return _origin(kind) is tuple and bool(args) and args[-1] is not Ellipsis


def is_record(kind: Any) -> bool:
    """An attrs class, a dataclass or a ``TypedDict``: structured from an object."""
    return isinstance(kind, type) and (
        attrs.has(kind) or dataclasses.is_dataclass(kind) or typing.is_typeddict(kind)
    )


def _failures(pairs: Iterable[tuple[str, Any]], hook: Hook, kind: Any) -> NestedErrors:
    """On the slow path, after a collection failed: which items failed, and why."""
    failures: list[tuple[str, BaseException]] = []
    for where, value in pairs:
        try:
            hook(value, kind)
        except Exception as exc:
            failures.append((where, exc))
    if not failures:  # every item converts; building the collection failed (unhashable)
        failures.append(("", ExtractionValueError("expected an array of distinct values")))
    return NestedErrors(failures)


def sequence_hook(kind: Any, converter: cattrs.Converter) -> Hook:
    if is_fixed_tuple(kind):
        return _fixed_tuple_hook(typing.get_args(kind), converter)
    make = _SEQUENCES[_origin(kind)]
    args = typing.get_args(kind)
    item_kind = args[0] if args else Any
    item = converter.get_structure_hook(item_kind)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not list:
            raise ExtractionValueError(ARRAY_EXPECTED)
        try:
            items = [item(v, item_kind) for v in value]
            return items if make is list else make(items)
        except Exception:
            raise _failures(((f"[{i}]", v) for i, v in enumerate(value)), item, item_kind) from None

    return structure


def _fixed_tuple_hook(kinds: tuple[Any, ...], converter: cattrs.Converter) -> Hook:
    hooks = [(converter.get_structure_hook(k), k) for k in kinds]
    expected = f"{ARRAY_EXPECTED} of {len(kinds)} items"

    def structure(value: Any, _: Any) -> tuple[Any, ...]:
        if type(value) is not list or len(value) != len(hooks):
            raise ExtractionValueError(expected)
        failures: list[tuple[str, BaseException]] = []
        items = []
        for i, (v, (hook, kind)) in enumerate(zip(value, hooks, strict=True)):
            try:
                items.append(hook(v, kind))
            except Exception as exc:
                failures.append((f"[{i}]", exc))
        if failures:
            raise NestedErrors(failures)
        return tuple(items)

    return structure


def mapping_hook(kind: Any, converter: cattrs.Converter) -> Hook:
    args = typing.get_args(kind)
    value_kind = args[1] if len(args) == 2 else Any
    item = converter.get_structure_hook(value_kind)

    def structure(value: Any, _: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise ExtractionValueError(OBJECT_EXPECTED)
        try:
            return {k: item(v, value_kind) for k, v in value.items()}
        except Exception:
            pairs = ((f"[{k!r}]", v) for k, v in value.items())
            raise _failures(pairs, item, value_kind) from None

    return structure


def _constrained_fields(kind: Any, converter: cattrs.Converter) -> dict[str, Any]:
    """Overrides for the fields of a dataclass with string annotations whose types carry
    constraints: cattrs resolves such annotations without ``Annotated``, which would drop
    them. (attrs classes and ``TypedDict``s keep them.)"""
    if not dataclasses.is_dataclass(kind) or not any(
        isinstance(field.type, str) for field in dataclasses.fields(kind)
    ):
        return {}
    hints = typing.get_type_hints(kind, include_extras=True)
    overrides = {}
    for field in dataclasses.fields(kind):
        hint = hints.get(field.name)
        if field.init and mentions_constraints(hint):
            hook = converter.get_structure_hook(hint)
            overrides[field.name] = override(struct_hook=partial(_with_type, hook, hint))
    return overrides


def _with_type(hook: Hook, kind: Any, value: Any, _: Any) -> Any:
    return hook(value, kind)


def record_hook(kind: Any, converter: cattrs.Converter) -> Hook:
    make = make_typeddict_structure_fn if typing.is_typeddict(kind) else make_dict_structure_fn
    fields = make(kind, converter, **_constrained_fields(kind, converter))

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise ExtractionValueError(OBJECT_EXPECTED)
        return fields(value, kind)

    return structure
