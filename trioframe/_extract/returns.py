"""A handler's return annotation, checked when the app is frozen like an extractor's type.

``-> Response`` (or a subclass), ``-> str``, ``-> bytes``, ``-> None``, ``-> object``,
``-> Any`` and no annotation at all say nothing about a JSON body and pass. Anything else is a
value the handler's response is written from as JSON (``_response.to_response``), so the JSON
converter must be able to write it: a record, a pydantic model, a list or mapping of them, one
of the extractors' value types; a union passes when each member does.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from .._codec.check import UnsupportedType, check_json, type_name
from .._errors import ConfigurationError
from .._response import Response

__all__ = ["check_return"]

#: Declared returns that are not a JSON value: the handler's response is built as today.
_OPAQUE = (Response, str, bytes, bytearray, memoryview)


def check_return(handler: str, returns: Any) -> None:
    """Refuse a declared return type the JSON converter cannot write, with a
    ``ConfigurationError`` naming the handler and the type."""
    for member in _members(returns):
        if member is None or member is type(None) or member is Any or member is object:
            continue
        if isinstance(member, type) and issubclass(member, _OPAQUE):
            continue
        try:
            check_json(_object_as_any(member))
        except UnsupportedType as exc:
            raise ConfigurationError(
                f"handler {handler}: its return annotation -> {type_name(returns)} cannot be "
                f"written as JSON ({exc}); return a record, a pydantic model or a list or "
                "mapping of them, or annotate it -> Response"
            ) from None


def _members(returns: Any) -> list[Any]:
    if typing.get_origin(returns) is Annotated:
        returns = typing.get_args(returns)[0]
    if typing.get_origin(returns) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(returns) for m in _members(arg)]
    return [returns]


def _object_as_any(kind: Any) -> Any:
    """``kind`` with ``object`` inside it read as ``Any`` (``dict[str, object]`` says "any
    JSON value" there, as it does at the top)."""
    if kind is object:
        return Any
    args = typing.get_args(kind)
    origin = typing.get_origin(kind)
    if not args or origin is None or origin is Annotated:
        return kind
    rebuilt = tuple(_object_as_any(arg) for arg in args)
    if rebuilt == args:
        return kind
    if origin in (typing.Union, types.UnionType):
        return typing.Union[rebuilt]  # noqa: UP007 (built from a tuple)
    return origin[rebuilt]
