"""The values routing hands to the dispatch layer: endpoints and match results.

:class:`Endpoint` describes one registered route (or fallback) when a router is frozen; the
dispatch layer turns each into its own prepared object ``T``, and each chain of routers that
owns a path (a nest scope) into its own prepared scope ``S`` (what answers without an endpoint
need: their middleware and state, taken once). ``RouteTable[T, S].match`` then answers with
exactly one of the frozen result classes here, which hold prepared values only, never a
router. They only describe the outcome; building the HTTP response (404, 405, 308, 204, 400)
is the caller's job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

import attrs

from .._http.method import Method
from .meta import RouteMeta

__all__ = [
    "WEBSOCKET",
    "AutoOptions",
    "BadPath",
    "Endpoint",
    "Found",
    "MatchResult",
    "NoRoute",
    "Owner",
    "Redirect",
    "WrongMethod",
]

T = TypeVar("T")
S = TypeVar("S")


class Owner(Protocol):
    """A router as the dispatch layer reads it while it prepares endpoints and scopes."""

    @property
    def middlewares(self) -> list[Any]: ...
    @property
    def states(self) -> list[Any]: ...
    @property
    def multipart_settings(self) -> Any: ...


#: The method key WebSocket routes are stored under. It is not a token, so no request line can
#: carry it: only an upgrade request, recognised by the dispatch layer, is matched against it.
WEBSOCKET = Method("(websocket)")


@attrs.frozen
class Endpoint:
    """One route (or fallback) of a frozen router, as given to ``prepare``.

    * ``method``: the HTTP method, or ``None`` for a fallback.
    * ``pattern``: the full pattern including every nest prefix (``/api/users/{id}``). For a
      fallback it is the prefix the fallback covers (``/`` for the outermost router).
    * ``handler``: the registered callable, unchanged.
    * ``routers``: the routers that own this endpoint, outermost first. A route registered on a
      router nested twice deep has ``(root, middle, inner)``; later stages compose middleware
      and state from this chain.
    * ``param_names``: the names of the values ``Found.params`` will hold, in path order
      (empty for fallbacks, which receive no path parameters).
    * ``subprotocols``: for a WebSocket route (``method`` is :data:`WEBSOCKET`), the
      subprotocols it speaks, preferred first.
    * ``meta``: what its registration call said (full name, status, tags, ...); ``None``
      for a fallback.
    """

    method: Method | None
    pattern: str
    handler: Callable[..., Any]
    routers: tuple[Owner, ...]
    param_names: tuple[str, ...]
    subprotocols: tuple[str, ...] = ()
    meta: RouteMeta | None = None

    @property
    def is_websocket(self) -> bool:
        """True for a WebSocket route."""
        return self.method is WEBSOCKET


# Not frozen, but never changed: a frozen attrs class sets its fields through
# ``object.__setattr__``, which costs more, and one is made per request.
@attrs.define
class Found(Generic[T]):
    """A route matched: ``target`` is its prepared endpoint, ``params`` the decoded path
    parameters by name (a fresh dict per match). A ``HEAD`` request on a route with ``GET`` but
    no ``HEAD`` handler gets the ``GET`` target; the caller sends headers only. Never changed
    once made."""

    target: T
    params: dict[str, str]


@attrs.frozen
class Redirect:
    """The path matches a route only with (or only without) a trailing slash.

    ``location`` is the request's raw path (still percent-encoded) with the slash added or
    removed: relative, never starting with ``//``. The caller appends ``?query`` when there was
    one and answers 308, which keeps the method and body."""

    location: str


@attrs.frozen
class WrongMethod(Generic[S]):
    """The path matches but no route has this method (405). ``allow`` lists the path's methods
    in a stable order, with ``HEAD`` when ``GET`` exists and ``OPTIONS`` always (never the
    WebSocket key). ``scope`` is the prepared scope of the router chain the path's routes share
    (see :class:`Endpoint`). ``websocket`` says the path has a WebSocket route (a plain ``GET``
    there is answered 426)."""

    allow: tuple[str, ...]
    scope: S
    websocket: bool = False


@attrs.frozen
class AutoOptions(Generic[S]):
    """``OPTIONS`` on a path that has routes but no ``OPTIONS`` route: the caller answers 204
    with ``Allow``. Fields as in :class:`WrongMethod`."""

    allow: tuple[str, ...]
    scope: S


@attrs.frozen
class NoRoute(Generic[T, S]):
    """No route matches (404 unless there is a fallback).

    ``scope`` is the prepared scope of the most specific nested router whose prefix covers the
    path (the outermost router's outside every prefix). ``fallback`` is the prepared fallback
    for that chain: the innermost router in it that declared one supplies the handler, and the
    endpoint was prepared with this same chain. ``None`` means: answer the built-in 404."""

    fallback: T | None
    scope: S


@attrs.frozen
class BadPath:
    """The path cannot be decoded (bad percent-encoding, invalid UTF-8 after decoding, or no
    leading ``/``): the caller answers 400 with ``message``."""

    message: str


MatchResult: TypeAlias = (
    Found[T] | Redirect | WrongMethod[S] | AutoOptions[S] | NoRoute[T, S] | BadPath
)
"""Everything ``RouteTable[T, S].match`` can answer."""
