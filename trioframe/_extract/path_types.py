"""The types a route's path parameters are read as, from what its handler's plan learned: what
``path_for`` writes each parameter with."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Any

from .._codec import pydantic_models
from .._codec.check import unwrap
from .._codec.shapes import is_record, is_sequence
from .params import ParamInfo

__all__ = ["path_types"]


def _record_types(kind: Any, names: tuple[str, ...]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(kind)
    except Exception:  # the planner read the record; a hint it cannot resolve: untyped
        return {}
    return {name: hints[name] for name in names if name in hints}


def _types_of(info: ParamInfo, names: tuple[str, ...]) -> dict[str, Any]:
    """What one ``Path[T]`` reads each route parameter as (the forms of ``path_step``)."""
    kind = unwrap(info.type)
    if is_record(kind) or pydantic_models.is_model(kind):
        return _record_types(kind, names)
    if typing.get_origin(kind) is tuple:
        return dict(zip(names, typing.get_args(kind), strict=False))
    if is_sequence(kind):
        item = (typing.get_args(kind) or (Any,))[0]
        return dict.fromkeys(names, item)
    if len(names) == 1:
        return {names[0]: kind}
    return {info.name: kind} if info.name in names else {}


def path_types(params: Iterable[ParamInfo], names: tuple[str, ...]) -> dict[str, Any]:
    """The type each of the route parameters ``names`` is read as by the first ``Path[T]``
    that reads it (the handler's or a dependency's); a parameter no ``Path[T]`` reads is
    left out (``path_for`` writes it with ``str``), and so is one read as ``Any``."""
    found: dict[str, Any] = {}
    for info in params:
        if info.source == "path":
            for name, kind in _types_of(info, names).items():
                if kind is not Any:
                    found.setdefault(name, kind)
    return found
