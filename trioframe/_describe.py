"""``RouteInfo``: a frozen application's description of one route, built at freeze from the
route's endpoint and its handler's plan (``App.routes``)."""

from __future__ import annotations

import typing
from collections.abc import Callable
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

    * ``name``: the handler's ``__name__``.
    * ``path``: the pattern as registered, with every nest prefix (``/api/items/{id}``).
    * ``methods``: the methods it answers (``("GET",)``; a WebSocket route: ``("GET",)``
      too, with ``websocket`` set).
    * ``handler``: the registered callable.
    * ``params``: what its handler takes, one ``ParamInfo`` per input.
    * ``returns``: the handler's declared return type, ``None`` when it declares none.
    * ``websocket``: a WebSocket route.
    """

    name: str
    path: str
    methods: tuple[str, ...]
    handler: Callable[..., Any]
    params: tuple[ParamInfo, ...]
    returns: Any
    websocket: bool = False


def route_info(endpoint: Endpoint, plan: HandlerPlan) -> RouteInfo:
    """The ``RouteInfo`` of a route's ``endpoint`` planned as ``plan``."""
    handler = endpoint.handler
    websocket = endpoint.is_websocket
    method = "GET" if websocket else str(endpoint.method)
    return RouteInfo(
        name=getattr(handler, "__name__", type(handler).__name__),
        path=endpoint.pattern,
        methods=(method,),
        handler=handler,
        params=plan.params,
        returns=plan.returns,
        websocket=websocket,
    )
