"""The registration calls of ``Router``: ``route``, ``get``, ``post``, ``put``, ``patch``,
``delete``, ``head``, ``options`` and ``websocket``, directly or as decorators, each with the
keywords of :class:`~.meta.RouteOptions`. Each call is checked at once (pattern, methods,
handler, keywords, a method and pattern registered twice on one router)."""

from __future__ import annotations

import string
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Self, TypeVar, Unpack, overload

import attrs

from .._errors import ConfigurationError
from .._http.grammar import TCHAR_PUNCTUATION
from .._http.method import Method
from .meta import RouteMeta, RouteOptions, named, route_meta
from .pattern import Pattern, parse_pattern
from .results import WEBSOCKET

__all__ = ["Handler", "Registrations", "check_handler"]

#: A handler: an async function (or an object with an ``async def __call__``).
Handler = Callable[..., Awaitable[Any]]
H = TypeVar("H", bound=Handler)

_TOKEN_CHARS = frozenset(TCHAR_PUNCTUATION + string.digits + string.ascii_uppercase)
_SUBPROTOCOL_CHARS = _TOKEN_CHARS | frozenset(string.ascii_lowercase)


@attrs.frozen
class Route:
    """One registered route, as the router keeps it until it is frozen."""

    method: Method
    pattern: Pattern
    handler: Callable[..., Any]
    meta: RouteMeta
    subprotocols: tuple[str, ...] = ()


def _method(name: object) -> Method:
    if not isinstance(name, str) or not name or not set(name) <= _TOKEN_CHARS:
        hint = ""
        if isinstance(name, str) and name.upper() != name:
            hint = f" (method names are case-sensitive: did you mean {name.upper()!r}?)"
        raise ConfigurationError(f"invalid HTTP method {name!r}{hint}")
    if name == "CONNECT":
        raise ConfigurationError("CONNECT routes cannot be served: the server answers it 501")
    return Method.of(name)


def check_handler(handler: object, what: str) -> None:
    """``ConfigurationError`` unless ``handler`` (for ``what``) is callable."""
    if not callable(handler):
        raise ConfigurationError(f"the handler for {what} is not callable: {handler!r}")


class Registrations:
    """A router's own routes (in registration order) and the calls that add them.

    Every call returns the router; leave the handler out and it returns a decorator instead,
    which registers the function and returns it unchanged. The keywords (all optional) are
    those of :class:`~.meta.RouteOptions`: ``name``, ``status``, ``tags``, ``summary``,
    ``description``, ``deprecated``, ``include_in_schema``, ``responses``."""

    def __init__(self) -> None:
        self._routes: list[Route] = []
        self._keys: dict[tuple[str, tuple[str, ...]], str] = {}

    def _register(
        self,
        call: str,
        path: str,
        handler: Callable[..., Any] | None,
        methods: Any,
        keywords: RouteOptions,
        subprotocols: tuple[str, ...] = (),
    ) -> Any:
        pattern = parse_pattern(path)
        if methods is WEBSOCKET:
            names: tuple[Method, ...] = (WEBSOCKET,)
        else:
            names = tuple(_method(m) for m in ((methods,) if isinstance(methods, str) else methods))
        if not names:
            raise ConfigurationError(f"route {path!r} needs at least one method")
        what = "WebSocket" if methods is WEBSOCKET else "/".join(names)
        meta = route_meta(f"{what} {path}", call, keywords)

        def register(function: H) -> H:
            check_handler(function, f"{what} {path}")
            pending: dict[tuple[str, tuple[str, ...]], str] = {}
            for method in names:
                key = (str(method), pattern.shape)
                other = self._keys.get(key, pending.get(key))
                pending[key] = path
                if other is not None:
                    same = "" if other == path else f" (it matches the same paths as {other})"
                    raise ConfigurationError(
                        f"duplicate route: {what} {path} is registered twice{same}"
                    )
            self._keys.update(pending)
            route_named = named(meta, function)
            for method in names:
                self._routes.append(Route(method, pattern, function, route_named, subprotocols))
            return function

        if handler is None:
            return register
        register(handler)
        return self

    @overload
    def route(
        self,
        path: str,
        handler: None = None,
        *,
        methods: Iterable[Method | str],
        **keywords: Unpack[RouteOptions],
    ) -> Callable[[H], H]: ...
    @overload
    def route(
        self,
        path: str,
        handler: Handler,
        methods: Iterable[Method | str],
        **keywords: Unpack[RouteOptions],
    ) -> Self: ...
    def route(
        self,
        path: str,
        handler: Callable[..., Any] | None = None,
        methods: Iterable[Method | str] = (),
        **keywords: Unpack[RouteOptions],
    ) -> Any:
        """Register ``handler`` at ``path`` for each of ``methods`` (``Method`` constants or
        upper-case names; method names are case-sensitive, so ``"get"`` is refused)."""
        return self._register("route", path, handler, methods, keywords)

    @overload
    def get(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def get(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def get(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register a ``GET`` route (which also answers ``HEAD`` unless a ``HEAD`` route is
        registered for the same pattern)."""
        return self._register("get", path, handler, (Method.GET,), keywords)

    @overload
    def post(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def post(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def post(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register a ``POST`` route."""
        return self._register("post", path, handler, (Method.POST,), keywords)

    @overload
    def put(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def put(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def put(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register a ``PUT`` route."""
        return self._register("put", path, handler, (Method.PUT,), keywords)

    @overload
    def delete(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def delete(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def delete(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register a ``DELETE`` route."""
        return self._register("delete", path, handler, (Method.DELETE,), keywords)

    @overload
    def patch(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def patch(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def patch(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register a ``PATCH`` route."""
        return self._register("patch", path, handler, (Method.PATCH,), keywords)

    @overload
    def head(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def head(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def head(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register an explicit ``HEAD`` route (it wins over the automatic ``GET`` one)."""
        return self._register("head", path, handler, (Method.HEAD,), keywords)

    @overload
    def options(
        self, path: str, handler: None = None, **keywords: Unpack[RouteOptions]
    ) -> Callable[[H], H]: ...
    @overload
    def options(self, path: str, handler: Handler, **keywords: Unpack[RouteOptions]) -> Self: ...
    def options(
        self, path: str, handler: Handler | None = None, **keywords: Unpack[RouteOptions]
    ) -> Any:
        """Register an explicit ``OPTIONS`` route (instead of the automatic 204 with
        ``Allow``)."""
        return self._register("options", path, handler, (Method.OPTIONS,), keywords)

    @overload
    def websocket(
        self,
        path: str,
        handler: None = None,
        *,
        subprotocols: Iterable[str] | None = None,
        **keywords: Unpack[RouteOptions],
    ) -> Callable[[H], H]: ...
    @overload
    def websocket(
        self,
        path: str,
        handler: Handler,
        *,
        subprotocols: Iterable[str] | None = None,
        **keywords: Unpack[RouteOptions],
    ) -> Self: ...
    def websocket(
        self,
        path: str,
        handler: Handler | None = None,
        *,
        subprotocols: Iterable[str] | None = None,
        **keywords: Unpack[RouteOptions],
    ) -> Any:
        """Register a WebSocket route: an upgrade request (``GET`` with ``Upgrade: websocket``)
        on ``path`` runs ``handler``, which takes a ``WebSocketConnection`` and any other
        extractor but a body one. ``subprotocols`` lists what the route speaks, preferred
        first; the first the client offers is chosen (``ws.subprotocol``; ``None`` when there
        is no overlap, and the upgrade still succeeds). A ``GET`` without the upgrade is
        answered 426. The same path may also have ordinary routes, ``GET`` included."""
        protocols = tuple(subprotocols or ())
        for protocol in protocols:
            if (
                not isinstance(protocol, str)
                or not protocol
                or not set(protocol) <= _SUBPROTOCOL_CHARS
            ):
                raise ConfigurationError(f"invalid WebSocket subprotocol {protocol!r}")
        return self._register("websocket", path, handler, WEBSOCKET, keywords, protocols)

    websocket_fn = websocket
