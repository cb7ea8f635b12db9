"""The public ``Router`` builder: nesting, fallbacks, and ``freeze`` (its registration calls
are ``register``'s).

A ``Router`` only records what the application declares and checks each declaration at once
(bad patterns, bad methods, bad keywords, duplicates). Nested routers are kept by reference
and flattened when the router is frozen, so routes added to a sub-router after ``nest`` still
count; their names get the nest names then.
``freeze`` hands the flattened routes to ``table.build_table``; matching lives there.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Self, TypeVar, overload

from .._errors import ConfigurationError
from .._metrics.route import MetricsRoute, require_prometheus_client
from .._multipart.decoder import MultipartConfig
from .._openapi.pages import docs_routes
from .meta import check_nest_name
from .openapi import OpenAPIDocument
from .pattern import Pattern, parse_prefix
from .register import Handler, Registrations, check_handler
from .results import Endpoint, Owner
from .table import RouteSpec, RouteTable, ScopeSpec, build_table

if TYPE_CHECKING:
    from .._request import Request
    from .._response import Response

__all__ = ["Router"]

T = TypeVar("T")
S = TypeVar("S")
H = TypeVar("H", bound=Handler)
L = TypeVar("L", bound=Callable[..., Any])  # a lifespan function
#: A middleware: ``async (request, next) -> response``.
MiddlewareFunction = Callable[
    ["Request", Callable[["Request"], Awaitable["Response"]]], Awaitable[Any]
]


class Router(Registrations):
    """Routes, nested routers, a fallback, middleware and state, declared by chaining.

    Every registration returns the router. Leave the handler out and the call returns a
    decorator instead, which registers the function and returns it unchanged::

        router = Router().get("/", index)

        @router.get("/users/{user_id}", name="user", tags=["users"])
        async def get_user(user_id: Path[int]) -> Response: ...

    Each registration call takes the keywords ``name`` (what ``path_for`` calls the route;
    default: the handler's ``__name__``), ``status``, ``tags``, ``summary``,
    ``description``, ``deprecated``, ``include_in_schema`` and ``responses``, described in
    ``RouteOptions`` and carried into ``RouteInfo``.

    Patterns are checked when registered; a malformed pattern or a method and pattern
    registered twice raises ``ConfigurationError``. Collisions that come from nesting are found
    by :meth:`freeze`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._nests: list[tuple[Pattern, Router, str | None]] = []
        self._fallback: Callable[..., Any] | None = None
        #: middleware in the order attached (the first attached runs outermost)
        self.middlewares: list[Any] = []
        #: state values in the order registered
        self.states: list[Any] = []
        #: Limits for ``Multipart`` on this router's routes (``None``: inherit or default).
        self.multipart_settings: Any = None
        #: lifespan functions in the order registered
        self.lifespans: list[Callable[..., Any]] = []
        #: what ``openapi()`` was given (``None``: no document is served)
        self.openapi_document: OpenAPIDocument | None = None
        #: what ``metrics()`` registered (``None``: the app has no metrics)
        self.metrics_route: MetricsRoute | None = None

    def __repr__(self) -> str:
        return f"<Router routes={len(self._routes)} nested={len(self._nests)}>"

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

    def nest(self, prefix: str, router: Router, name: str | None = None) -> Self:
        """Mount ``router``'s routes (and its middleware, state and fallback) under ``prefix``.

        ``prefix`` starts with ``/``, does not end with ``/`` and may contain ``{params}``
        (captured like any other) but no wildcard. The sub-router's ``/`` is reachable at
        exactly the prefix (``/api``), and ``/api/`` redirects there; ``/x`` becomes
        ``/api/x``. Nesting may go any number of levels deep. The sub-router is kept by
        reference: routes it gets later are included when the outer router is frozen, which
        is also when collisions between its routes and others are reported.

        ``name`` prefixes the names of the nested routes: with ``name="api"``, a route named
        ``users`` inside is ``api.users`` (and ``api.v1.users`` one level deeper).
        """
        pattern = parse_prefix(prefix)
        if not isinstance(router, Router):
            raise ConfigurationError(f"nest({prefix!r}, ...) needs a Router, not {router!r}")
        if router is self:
            raise ConfigurationError(f"a router cannot be nested inside itself ({prefix!r})")
        check_nest_name(prefix, name)
        self._nests.append((pattern, router, name))
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
            check_handler(function, "the fallback")
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
            for _, sub, _ in router._nests:
                visit(sub)

        visit(self)
        return found

    def openapi(
        self,
        path: str = "/openapi.json",
        *,
        title: str,
        version: str,
        description: str | None = None,
        servers: Iterable[str] | None = None,
        docs_path: str | None = "/docs",
        redoc_path: str | None = "/redoc",
    ) -> Self:
        """Serve the application's OpenAPI 3.1 document at ``path`` (GET, JSON), and the
        documentation pages that show it: Swagger UI at ``docs_path`` and Redoc at
        ``redoc_path`` (``None`` leaves one out), from files shipped in trioframe (see
        ``docs_routes``). The document is built once, when the router is frozen, from the
        frozen app's routes: every route but the WebSocket ones and those registered with
        ``include_in_schema=False`` (the document's and the pages' own among them). A type no
        schema can describe is a ``ConfigurationError`` then. Call it on the outermost
        router, once."""
        if self.openapi_document is not None:
            raise ConfigurationError(
                f"openapi() was called twice on this router (for {self.openapi_document.path} "
                f"and {path}): one document per application"
            )
        document = OpenAPIDocument(path, title, version, description, tuple(servers or ()))
        self.openapi_document = document
        self.get(path, document, name="openapi", include_in_schema=False)
        return docs_routes(
            self, openapi_url=path, title=title, docs_path=docs_path, redoc_path=redoc_path
        )

    def metrics(self, path: str = "/metrics") -> Self:
        """Serve the application's Prometheus metrics at ``path`` (GET, the Prometheus text
        format): the HTTP server metrics of the semantic conventions (request duration by
        method, route and status; requests in progress; body sizes) and the server's own
        (connections, evictions, TLS failures, HTTP/2 error GOAWAYs, WebSocket sessions,
        refusals at shutdown), summed over every worker of a fleet. Each frozen app has its
        own. Like the OpenAPI routes, the route is left out of the OpenAPI document. Call it
        on the outermost router, once: the metrics are the whole application's (a nested
        router's is a ``ConfigurationError`` at startup). Needs prometheus_client
        (``ConfigurationError`` without it: ``pip install 'trioframe[prometheus]'``). See
        docs/observability.md."""
        if self.metrics_route is not None:
            raise ConfigurationError(
                f"metrics() was called twice on this router (for {self.metrics_route.path} "
                f"and {path}): one metrics route per application"
            )
        require_prometheus_client()
        route = MetricsRoute(path)
        self.get(path, route, name="metrics", include_in_schema=False)
        self.metrics_route = route
        return self

    def walk(self) -> list[Router]:
        """This router and every router nested in it, at any depth (depth-first, in nesting
        order, each once)."""
        found: list[Router] = []
        pending: list[Router] = [self]
        while pending:
            router = pending.pop()
            if any(router is seen for seen in found):
                continue
            found.append(router)
            pending.extend(reversed([sub for _, sub, _ in router._nests]))
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
        names: str | None,
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
            meta = route.meta if names is None else route.meta.under(names)
            routes.append(
                RouteSpec(route.method, pattern, route.handler, chain, route.subprotocols, meta)
            )
        for sub_prefix, sub, name in self._nests:
            full = sub_prefix if prefix is None else sub_prefix.under(prefix)
            sub_names = names if name is None else name if names is None else f"{names}.{name}"
            sub._collect(full, chain, fallback, sub_names, routes, scopes)

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
        self._collect(None, (), None, None, routes, scopes)
        return build_table(routes, scopes, prepare, prepare_scope)
