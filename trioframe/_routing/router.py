"""The public ``Router`` builder: registration, nesting, fallbacks, and ``freeze``.

A ``Router`` only records what the application declares and checks each declaration at once
(bad patterns, bad methods, duplicates). Nested routers are kept by reference and flattened
when the router is frozen, so routes added to a sub-router after ``nest`` still count.
``freeze`` hands the flattened routes to ``table.build_table``; matching lives there.
"""

from __future__ import annotations

import os
import string
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Self, TypeVar, overload

import attrs

from .._errors import ConfigurationError
from .._http.grammar import TCHAR_PUNCTUATION
from .._http.method import Method
from .._multipart.decoder import MultipartConfig
from .pattern import Pattern, parse_pattern, parse_prefix
from .results import WEBSOCKET, Endpoint, Owner
from .table import RouteSpec, RouteTable, ScopeSpec, build_table

if TYPE_CHECKING:
    from .._request import Request
    from .._response import Response

__all__ = ["Router"]

T = TypeVar("T")
S = TypeVar("S")
#: A handler: an async function (or an object with an ``async def __call__``).
Handler = Callable[..., Awaitable[Any]]
H = TypeVar("H", bound=Handler)
L = TypeVar("L", bound=Callable[..., Any])  # a lifespan function
#: A middleware: ``async (request, next) -> response``.
MiddlewareFunction = Callable[
    ["Request", Callable[["Request"], Awaitable["Response"]]], Awaitable[Any]
]

_TOKEN_CHARS = frozenset(TCHAR_PUNCTUATION + string.digits + string.ascii_uppercase)
_SUBPROTOCOL_CHARS = _TOKEN_CHARS | frozenset(string.ascii_lowercase)


@attrs.frozen
class _Route:
    method: Method
    pattern: Pattern
    handler: Callable[..., Any]
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


def _check_handler(handler: object, what: str) -> None:
    if not callable(handler):
        raise ConfigurationError(f"the handler for {what} is not callable: {handler!r}")


class Router:
    """Routes, nested routers, a fallback, middleware and state, declared by chaining.

    Every registration returns the router. Leave the handler out and the call returns a
    decorator instead, which registers the function and returns it unchanged::

        router = Router().get("/", index)

        @router.get("/users/{user_id}")
        async def get_user(user_id: Path[int]) -> Response: ...

    Patterns are checked when registered; a malformed pattern or a method and pattern
    registered twice raises ``ConfigurationError``. Collisions that come from nesting are found
    by :meth:`freeze`.
    """

    def __init__(self) -> None:
        self._routes: list[_Route] = []
        self._keys: dict[tuple[str, tuple[str, ...]], str] = {}
        self._nests: list[tuple[Pattern, Router]] = []
        self._fallback: Callable[..., Any] | None = None
        #: middleware in the order attached (the first attached runs outermost)
        self.middlewares: list[Any] = []
        #: state values in the order registered
        self.states: list[Any] = []
        #: Limits for ``Multipart`` on this router's routes (``None``: inherit or default).
        self.multipart_settings: Any = None
        #: lifespan functions in the order registered
        self.lifespans: list[Callable[..., Any]] = []

    def __repr__(self) -> str:
        return f"<Router routes={len(self._routes)} nested={len(self._nests)}>"

    # -- registration -------------------------------------------------------------------
    def _register(
        self,
        path: str,
        handler: Callable[..., Any] | None,
        methods: Any,
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

        def register(function: H) -> H:
            _check_handler(function, f"{what} {path}")
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
            for method in names:
                self._routes.append(_Route(method, pattern, function, subprotocols))
            return function

        if handler is None:
            return register
        register(handler)
        return self

    @overload
    def route(
        self, path: str, handler: None = None, *, methods: Iterable[Method | str]
    ) -> Callable[[H], H]: ...
    @overload
    def route(self, path: str, handler: Handler, methods: Iterable[Method | str]) -> Self: ...
    def route(
        self,
        path: str,
        handler: Callable[..., Any] | None = None,
        methods: Iterable[Method | str] = (),
    ) -> Any:
        """Register ``handler`` at ``path`` for each of ``methods`` (``Method`` constants or
        upper-case names; method names are case-sensitive, so ``"get"`` is refused)."""
        return self._register(path, handler, methods)

    @overload
    def get(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def get(self, path: str, handler: Handler) -> Self: ...
    def get(self, path: str, handler: Handler | None = None) -> Any:
        """Register a ``GET`` route (which also answers ``HEAD`` unless a ``HEAD`` route is
        registered for the same pattern)."""
        return self._register(path, handler, (Method.GET,))

    @overload
    def post(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def post(self, path: str, handler: Handler) -> Self: ...
    def post(self, path: str, handler: Handler | None = None) -> Any:
        """Register a ``POST`` route."""
        return self._register(path, handler, (Method.POST,))

    @overload
    def put(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def put(self, path: str, handler: Handler) -> Self: ...
    def put(self, path: str, handler: Handler | None = None) -> Any:
        """Register a ``PUT`` route."""
        return self._register(path, handler, (Method.PUT,))

    @overload
    def delete(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def delete(self, path: str, handler: Handler) -> Self: ...
    def delete(self, path: str, handler: Handler | None = None) -> Any:
        """Register a ``DELETE`` route."""
        return self._register(path, handler, (Method.DELETE,))

    @overload
    def patch(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def patch(self, path: str, handler: Handler) -> Self: ...
    def patch(self, path: str, handler: Handler | None = None) -> Any:
        """Register a ``PATCH`` route."""
        return self._register(path, handler, (Method.PATCH,))

    @overload
    def head(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def head(self, path: str, handler: Handler) -> Self: ...
    def head(self, path: str, handler: Handler | None = None) -> Any:
        """Register an explicit ``HEAD`` route (it wins over the automatic ``GET`` one)."""
        return self._register(path, handler, (Method.HEAD,))

    @overload
    def options(self, path: str, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def options(self, path: str, handler: Handler) -> Self: ...
    def options(self, path: str, handler: Handler | None = None) -> Any:
        """Register an explicit ``OPTIONS`` route (instead of the automatic 204 with
        ``Allow``)."""
        return self._register(path, handler, (Method.OPTIONS,))

    @overload
    def websocket(
        self, path: str, handler: None = None, *, subprotocols: Iterable[str] | None = None
    ) -> Callable[[H], H]: ...
    @overload
    def websocket(
        self,
        path: str,
        handler: Handler,
        *,
        subprotocols: Iterable[str] | None = None,
    ) -> Self: ...
    def websocket(
        self,
        path: str,
        handler: Handler | None = None,
        *,
        subprotocols: Iterable[str] | None = None,
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
        return self._register(path, handler, WEBSOCKET, protocols)

    websocket_fn = websocket

    # -- composition --------------------------------------------------------------------
    def static(
        self,
        prefix: str,
        directory: str | os.PathLike[str],
        *,
        index: str | None = "index.html",
        follow_symlinks: bool = False,
        precompressed: bool = True,
        cache_control: str | None = None,
    ) -> Self:
        """Serve the regular files of ``directory`` under ``prefix`` (GET and HEAD), with
        everything ``Response.file`` does (ranges, conditional requests). Paths that leave
        the directory, dotfiles and symlinks out of it (unless ``follow_symlinks``) are 404;
        a directory serves its ``index``; ``precompressed`` serves a ``.br``/``.gz`` sibling
        to clients that accept it. See the Files page of the docs."""
        from .._files.static import StaticFiles

        files = StaticFiles(
            directory,
            index=index,
            follow_symlinks=follow_symlinks,
            precompressed=precompressed,
            cache_control=cache_control,
        )
        base = prefix.rstrip("/")
        return self.get(base + "/{*path}", files.serve).get(base + "/", files.serve)

    def nest(self, prefix: str, router: Router) -> Self:
        """Mount ``router``'s routes (and its middleware, state and fallback) under ``prefix``.

        ``prefix`` starts with ``/``, does not end with ``/`` and may contain ``{params}``
        (captured like any other) but no wildcard. The sub-router's ``/`` is reachable at
        exactly the prefix (``/api``), and ``/api/`` redirects there; ``/x`` becomes
        ``/api/x``. Nesting may go any number of levels deep. The sub-router is kept by
        reference: routes it gets later are included when the outer router is frozen, which
        is also when collisions between its routes and others are reported.
        """
        pattern = parse_prefix(prefix)
        if not isinstance(router, Router):
            raise ConfigurationError(f"nest({prefix!r}, ...) needs a Router, not {router!r}")
        if router is self:
            raise ConfigurationError(f"a router cannot be nested inside itself ({prefix!r})")
        self._nests.append((pattern, router))
        return self

    @overload
    def fallback(self, handler: None = None) -> Callable[[H], H]: ...
    @overload
    def fallback(self, handler: Handler) -> Self: ...
    def fallback(self, handler: Handler | None = None) -> Any:
        """Handle requests that match no route, instead of the built-in 404.

        A nested router's fallback covers the unmatched paths under its prefix; the most
        specific prefix wins (longest, then literal segments before parameters). A nested
        router without a fallback uses the nearest outer one's, run with the nested router's
        own chain (so its middleware applies). Paths outside every prefix get the outermost
        router's fallback. A fallback receives no path parameters. Setting it twice on one
        router raises ``ConfigurationError``.
        """

        def register(function: H) -> H:
            _check_handler(function, "the fallback")
            if self._fallback is not None:
                raise ConfigurationError("this router already has a fallback")
            self._fallback = function
            return function

        if handler is None:
            return register
        register(handler)
        return self

    def middleware(self, mw: MiddlewareFunction) -> Self:
        """Attach a middleware; the first attached runs outermost (stored in
        :attr:`middlewares`)."""
        self.middlewares.append(mw)
        return self

    def state(self, value: object) -> Self:
        """Register application state, looked up later by its type (stored in
        :attr:`states`)."""
        self.states.append(value)
        return self

    @overload
    def lifespan(self, fn: None = None) -> Callable[[L], L]: ...
    @overload
    def lifespan(self, fn: Callable[..., Any]) -> Self: ...
    def lifespan(self, fn: Callable[..., Any] | None = None) -> Any:
        """Register a lifespan: an async context manager function (``@asynccontextmanager``)
        taking nothing or one ``trio.Nursery`` (the app nursery, whose tasks run until
        shutdown). The server enters it before accepting the first connection and exits it
        after graceful shutdown has drained the connections and cancelled the app nursery's
        tasks. The value it yields, unless ``None``, is state for this router's routes (a
        tuple: each item), typed by the function's return annotation
        (``-> AsyncIterator[Db]``). Several lifespans, nested routers' included, are entered
        in order (this router's first, then each nested router's) and exited in reverse."""

        def register(function: L) -> L:
            if not callable(function):
                raise ConfigurationError(f"a lifespan must be callable, not {function!r}")
            self.lifespans.append(function)
            return function

        if fn is None:
            return register
        register(fn)
        return self

    def all_lifespans(self) -> list[tuple[Router, Callable[..., Any]]]:
        """``(owner, function)`` for the lifespans of this router and of every router nested
        in it (depth-first, in nesting order, each router once): the order they are entered."""
        found: list[tuple[Router, Callable[..., Any]]] = []
        seen: set[int] = set()

        def visit(router: Router) -> None:
            if id(router) in seen:
                return
            seen.add(id(router))
            found.extend((router, function) for function in router.lifespans)
            for _, sub in router._nests:
                visit(sub)

        visit(self)
        return found

    def multipart_config(self, config: MultipartConfig) -> Self:
        """Limits (a ``MultipartConfig``) for the ``Multipart`` extractor on this router's
        routes; nest a router to give some routes their own limits."""
        self.multipart_settings = config
        return self

    # -- freezing -----------------------------------------------------------------------
    def _collect(
        self,
        prefix: Pattern | None,
        outer: tuple[Router, ...],
        inherited: Callable[..., Any] | None,
        routes: list[RouteSpec],
        scopes: list[ScopeSpec],
    ) -> None:
        if self in outer:
            where = prefix.source if prefix is not None else "/"
            raise ConfigurationError(f"routers are nested in a cycle (at {where})")
        chain = (*outer, self)
        fallback = self._fallback if self._fallback is not None else inherited
        scopes.append(ScopeSpec(prefix, chain, fallback))
        for route in self._routes:
            pattern = route.pattern if prefix is None else route.pattern.under(prefix)
            routes.append(
                RouteSpec(route.method, pattern, route.handler, chain, route.subprotocols)
            )
        for sub_prefix, sub in self._nests:
            full = sub_prefix if prefix is None else sub_prefix.under(prefix)
            sub._collect(full, chain, fallback, routes, scopes)

    def freeze(
        self,
        prepare: Callable[[Endpoint], T],
        prepare_scope: Callable[[tuple[Owner, ...]], S],
    ) -> RouteTable[T, S]:
        """Build the matcher once and return it as a :class:`RouteTable`.

        ``prepare`` is called exactly once per :class:`Endpoint`: every route, in registration
        order with nested routes where they were nested, then one fallback endpoint per nest
        scope that has a fallback in force (see :meth:`fallback`); ``prepare_scope`` once per
        router chain a match result can carry (outermost router first). The table answers with
        what they returned. Raises ``ConfigurationError`` for a method and pattern that
        collide across nested routers, two routers nested at the same prefix, a nesting cycle,
        or a parameter name repeated between a prefix and a nested pattern. The router can
        still be changed and frozen again afterwards; the table does not follow it.
        """
        routes: list[RouteSpec] = []
        scopes: list[ScopeSpec] = []
        self._collect(None, (), None, routes, scopes)
        return build_table(routes, scopes, prepare, prepare_scope)
