"""The records ``Query[T]``, ``Form[T]`` and ``Path[T]`` fill field by field: one table, so
that what is accepted and what the startup errors say is accepted cannot drift apart."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import attrs

from .._codec import pydantic_models

__all__ = ["RECORD_KINDS", "WHOLE_QUERY_KINDS", "fields_of"]


def _attrs_fields(kind: Any) -> dict[str, Any]:
    return {f.name: f.type for f in attrs.fields(kind)}


def _dataclass_fields(kind: Any) -> dict[str, Any]:
    return {f.name: f.type for f in dataclasses.fields(kind)}


def _typeddict_fields(kind: Any) -> dict[str, Any]:
    return dict(kind.__annotations__)


def _model_fields(kind: Any) -> dict[str, Any]:
    return {name: f.annotation for name, f in kind.model_fields.items()}


#: (how a startup error names the kind, whether a class is one, its field names → types).
RECORD_KINDS: tuple[tuple[str, Callable[[Any], bool], Callable[[Any], dict[str, Any]]], ...] = (
    ("an attrs class", attrs.has, _attrs_fields),
    ("a dataclass", dataclasses.is_dataclass, _dataclass_fields),
    ("a TypedDict", typing.is_typeddict, _typeddict_fields),
    ("a pydantic model", pydantic_models.is_model, _model_fields),
)

#: Every ``T`` that makes ``Query[T]`` or ``Form[T]`` read all of its pairs, in words.
WHOLE_QUERY_KINDS = ", ".join(name for name, _, _ in RECORD_KINDS) + " or dict[str, X]"


def fields_of(kind: Any) -> dict[str, Any] | None:
    """Field names → types of a record of ``RECORD_KINDS``, else ``None``."""
    if not isinstance(kind, type):
        return None
    for _, accepts, fields in RECORD_KINDS:
        if accepts(kind):
            return fields(kind)
    return None
