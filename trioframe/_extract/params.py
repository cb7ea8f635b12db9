"""``ParamInfo``: what the planner learned about one input of a handler, kept so that the
frozen application can describe its routes without a request (documentation, URL building,
telemetry)."""

from __future__ import annotations

import typing
from typing import Annotated, Any

import attrs

from .._codec.constraints import Bounds, constraints_of
from .credentials import SecurityScheme

__all__ = ["MISSING", "ParamInfo", "describe"]


class _Missing:
    """The default of a parameter that has none."""

    def __repr__(self) -> str:
        return "MISSING"


#: ``ParamInfo.default`` of a parameter without a default.
MISSING: Any = _Missing()

#: The marker sources that name a place in the request, as ``ParamInfo.source`` says them.
_SOURCES = {"json": "body", "form": "body"}
_MEDIA = {"json": "application/json", "form": "application/x-www-form-urlencoded"}


@attrs.frozen
class ParamInfo:
    """One input of a handler (or of a ``FromRequest`` dependency it takes).

    * ``source``: where the value comes from: ``path``, ``query``, ``header``, ``cookie``,
      ``body``, ``state``, ``extension``, ``security`` (a credential: ``BearerToken``,
      ``BasicCredentials``, an ``APIKey``), ``request`` (the whole request or a part of it that
      is not one value: ``Request``, ``Headers``, ``Method``, ...), ``dependency`` (a
      ``FromRequest`` class; its own inputs follow it, with ``dependency`` set) or
      ``websocket`` (the connection of a WebSocket handler).
    * ``name``: the name on the wire for a single value (the query key, the lower-case
      header name, the cookie name: an ``Alias`` when one is given) and a credential
      (``authorization``, or the API key's name); the Python parameter's name for every
      other input.
    * ``type``: the type the value has once extracted (``T`` of ``Query[T]``, the class of
      ``Headers``, ...).
    * ``required``: the parameter has no default (for a single value: nor is it
      ``X | None``, which is ``None`` when absent; for a credential, the same).
    * ``default``: its default, or :data:`MISSING`.
    * ``media_type``: for a body, the media type it is read as (``None`` otherwise).
    * ``dependency``: the ``FromRequest`` class name this input belongs to, ``None`` for the
      handler's own parameters.
    * ``constraints``: the annotated-types constraints on the value's type itself
      (``Query[Annotated[int, Ge(1)]]``, a ``Path`` scalar), normalized, or ``None``;
      constraints on fields and items stay in ``type``.
    * ``security``: for a credential, its ``SecurityScheme`` (``None`` otherwise).
    * ``parameter``: the Python parameter's name (the same as ``name`` unless a single
      value's wire name differs).
    """

    source: str
    name: str
    type: Any
    required: bool = True
    default: Any = MISSING
    media_type: str | None = None
    dependency: str | None = None
    constraints: Bounds | None = None
    security: SecurityScheme | None = None
    parameter: str = attrs.field(
        default=attrs.Factory(lambda self: self.name, takes_self=True), kw_only=True
    )


def describe(
    name: str,
    annotation: Any,
    kind: str,
    default: Any = MISSING,
    dependency: str | None = None,
    *,
    wire: str | None = None,
    required: bool | None = None,
) -> ParamInfo:
    """The ``ParamInfo`` of the parameter ``name`` the planner gave a step of ``kind``: a
    marker's source (``path``, ``json``, ...), or ``request``, ``body``, ``multipart``,
    ``dependency``, ``websocket``. A single value gives its ``wire`` name, and whether it is
    ``required`` when that is not simply "has no default"."""
    value_type = annotation
    if typing.get_origin(annotation) is Annotated:
        value_type = typing.get_args(annotation)[0]
    source = _SOURCES.get(kind, kind)
    media = _MEDIA.get(kind)
    if kind == "multipart":
        source, media = "body", "multipart/form-data"
    elif kind == "body":
        media = "application/octet-stream"
    return ParamInfo(
        source=source,
        name=name if wire is None else wire,
        type=value_type,
        required=default is MISSING if required is None else required,
        default=default,
        media_type=media,
        dependency=dependency,
        constraints=constraints_of(annotation),
        parameter=name,
    )
