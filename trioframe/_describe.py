"""``RouteInfo``: a frozen application's description of one route, built at freeze from the
route's endpoint and its handler's plan (``App.routes``)."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ._extract.params import ParamInfo
from ._routing.results import Endpoint

if typing.TYPE_CHECKING:
    from ._extract import HandlerPlan

__all__ = ["RouteInfo", "route_info"]


@attrs.frozen
class RouteInfo:
    """One route of a frozen application.

    * ``name``: what ``path_for`` calls it: the ``name=`` it was registered with, else the
      handler's ``__name__``; after the names of the nests it is in (``api.get_user``).
    * ``path``: the pattern as registered, with every nest prefix (``/api/items/{id}``).
    * ``methods``: the methods it answers (``("GET",)``; a WebSocket route: ``("GET",)``
      too, with ``websocket`` set).
    * ``handler``: the registered callable.
    * ``params``: what its handler takes, one ``ParamInfo`` per input.
    * ``returns``: the handler's declared return type, ``None`` when it declares none.
    * ``websocket``: a WebSocket route.
    * ``status``, ``tags``, ``summary``, ``description``, ``deprecated``,
      ``include_in_schema``, ``responses``: as registered (``responses`` a read-only mapping
      of status to a description or a type, ``None`` when not given).
    """

    name: str
    path: str
    methods: tuple[str, ...]
    handler: Callable[..., Any]
    params: tuple[ParamInfo, ...]
    returns: Any
    websocket: bool = False
    status: int | None = None
    tags: tuple[str, ...] = ()
    summary: str | None = None
    description: str | None = None
    deprecated: bool = False
    include_in_schema: bool = True
    responses: Mapping[int, Any] | None = None


def route_info(endpoint: Endpoint, plan: HandlerPlan) -> RouteInfo:
    """The ``RouteInfo`` of a route's ``endpoint`` planned as ``plan``."""
    handler = endpoint.handler
    websocket = endpoint.is_websocket
    method = "GET" if websocket else str(endpoint.method)
    meta = endpoint.meta
    assert meta is not None  # a route's (only fallbacks have none)
    return RouteInfo(
        name=meta.name,
        path=endpoint.pattern,
        methods=(method,),
        handler=handler,
        params=plan.params,
        returns=plan.returns,
        websocket=websocket,
        status=meta.status,
        tags=meta.tags,
        summary=meta.summary,
        description=meta.description,
        deprecated=meta.deprecated,
        include_in_schema=meta.include_in_schema,
        responses=meta.responses,
    )
