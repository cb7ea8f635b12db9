"""``freeze(router)``: the one step from a ``Router`` being built to an ``App`` that answers.

Freezing builds the route table, every handler's extractor plan and middleware chain, the
middleware and state of the answers no route gives (404, 405, 308, OPTIONS), and the list of
lifespans, and runs every startup check (``ConfigurationError``). The ``App`` is immutable
and holds no reference to the router: changing the router afterwards changes nothing it does.
``App.route`` finds what answers a request (the server routes before it builds the
``Request``); ``App.routes`` describes every route.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from ._body import FileSource
from ._chain import Middleware, Next, answer_failure, compose, wrap
from ._describe import RouteInfo, route_info
from ._errors import ConfigurationError, Error
from ._extract import HandlerPlan, build_plan
from ._extract.context import Deferred
from ._extract.path_types import path_types
from ._files.resolve import resolve_file
from ._lifespan import Lifespan, plan_lifespans
from ._metrics.observer import Observer
from ._metrics.route import require_prometheus_client
from ._openapi.document import build_document
from ._response import Response, to_response
from ._routing.paths import NamedRoute, PathBuilder, build_paths
from ._routing.results import (
    WEBSOCKET,
    AutoOptions,
    BadPath,
    Endpoint,
    Found,
    NoRoute,
    Owner,
    Redirect,
    WrongMethod,
)
from ._routing.table import RouteTable
from ._websocket.accept import WebSocketPolicy, accept, check_upgrade, upgrade_required

if TYPE_CHECKING:
    from ._metrics.prometheus import PrometheusObserver
    from ._request import Request
    from ._routing.openapi import OpenAPIDocument
    from ._routing.router import Router
    from ._websocket.connection import WebSocketConnection

__all__ = ["App", "AppPolicy", "PreparedEndpoint", "Unrouted", "freeze", "openapi_document"]


@attrs.frozen
class AppPolicy:
    """The limits the application enforces, handed to it once, at freeze: the body limit of
    a route that does not stream multipart (413 past it), the JSON size ``Json[T]`` parses
    (413), and what accepting a WebSocket upgrade needs. ``Server`` takes them from its
    ``ServerConfig``."""

    max_body_size: int = 10 * 1024 * 1024
    max_json_size: int = 256 * 1024
    websocket: WebSocketPolicy = attrs.Factory(WebSocketPolicy)


@attrs.frozen
class PreparedEndpoint:
    """A route's endpoint, its handler plan, and ``run``: the endpoint wrapped in the
    middleware of every router that owns it, composed once at freeze. ``states`` are those
    routers' state values, outermost first (what ``request.state`` searches); ``body_limit``
    the most body bytes its request may have, named after its ``body_setting`` in the 413
    (``max_total_size`` of a route that streams multipart, else ``max_body_size``)."""

    endpoint: Endpoint
    plan: HandlerPlan
    run: Next
    states: tuple[Any, ...]
    body_limit: int
    body_setting: str
    #: the route's pattern, with nest prefixes (``None`` for a fallback): ``request.route``
    route: str | None = None


@attrs.frozen
class Unrouted:
    """What an answer no endpoint gives (404, 405, 308, OPTIONS) runs through in one nest
    scope: the middleware of the scope's routers, outermost first, and their state, both
    taken at freeze."""

    middlewares: tuple[Middleware, ...]
    states: tuple[Any, ...]


@attrs.frozen
class Unanswered:
    """The target of a request no endpoint takes: ``run`` is its scope's middleware around the
    answer its routing outcome calls for."""

    run: Next
    states: tuple[Any, ...]
    body_limit: int
    body_setting: str = "max_body_size"
    route: None = None  # (no route answers it)


def freeze(router: Router, policy: AppPolicy | None = None) -> App:
    """Freeze ``router`` into an immutable ``App``: the route table, every handler's
    extractor plan and middleware chain, the lifespans; ``policy`` the limits the app
    enforces (defaults: ``AppPolicy()``). Raises ``ConfigurationError`` for anything wrong
    with the routes, handlers or middleware; nothing is checked later but the ``State[T]``
    that only an unannotated lifespan can provide (``App.check_late_state``). Changing the
    router afterwards changes nothing the ``App`` does."""
    return _Freezer(router, policy or AppPolicy()).freeze()


@attrs.frozen
class App:
    """A frozen router ready to answer requests (made by :func:`freeze`).

    ``routes``: a ``RouteInfo`` per route: a router's own routes in registration order, then
    those of the routers nested in it, in the order they were nested. ``lifespans``: every
    lifespan, in the order they are entered; their values are state. ``policy``: the limits
    it enforces. ``paths``: the paths of its named routes (what :meth:`path_for` and
    ``request.path_for`` use)."""

    routes: tuple[RouteInfo, ...]
    lifespans: tuple[Lifespan, ...]
    policy: AppPolicy
    paths: PathBuilder
    _table: RouteTable[PreparedEndpoint, Unrouted]
    _root: Unrouted  # the outermost router's scope (a path no nest scope could be matched)
    _late_states: tuple[Deferred, ...]
    #: some route is a WebSocket route (only then does an upgrade request route differently)
    has_websockets: bool
    #: what the server reports its figures to (``Router.metrics``); ``None``: no metrics
    observer: Observer | None = None

    def check_late_state(self) -> None:
        """Once the lifespans have entered (and before a request is served): find the value of
        each ``State[T]`` that only a lifespan without a return annotation could provide.
        ``ConfigurationError`` naming the handler and parameter when none is a ``T``."""
        for late in self._late_states:
            late.resolve()

    def path_for(self, name: str, /, **params: Any) -> str:
        """The path of the route named ``name`` (see ``RouteInfo.name``) with ``params`` as
        its path parameters, each written as its ``Path[T]`` reads it and percent-encoded:
        ``app.path_for("get_user", user_id=42) == "/users/42"``. ``ValueError`` naming the
        name or parameter that is wrong (see docs/routing.md, "Route names")."""
        return self.paths.path_for(name, **params)

    def route(
        self, method: str, raw_path: str, upgrade: bool
    ) -> Found[PreparedEndpoint] | Found[Unanswered]:
        """What answers a request for ``method`` and ``raw_path`` (``upgrade``: it asks for a
        WebSocket, see ``has_websockets``): ``target.run(request)`` gives its response (an
        accepted WebSocket upgrade is a 101 whose body is an ``Upgrade``, the server acts on) and
        never raises but for cancellation: every failure becomes an error response that the
        middleware has seen. ``params`` are the path parameters, ``target.states`` the state
        its request sees, ``target.body_limit`` how much body it may have."""
        if upgrade:
            found = self._table.match(WEBSOCKET, raw_path)
            if type(found) is Found:
                return found
        match = self._table.match(method, raw_path)
        if type(match) is Found:
            return match
        if type(match) is NoRoute and match.fallback is not None:
            return Found(match.fallback, {})
        scope = getattr(match, "scope", None) or self._root

        async def answer(request: Request) -> Response:
            return _answer_unrouted(match, request)

        # The terminal is bound to this request's routing outcome, so the chain is composed
        # here: a few closures, and only for requests no endpoint answers.
        run = compose(scope.middlewares, answer)
        return Found(Unanswered(run, scope.states, self.policy.max_body_size), {})


class _Freezer:
    """One freeze: the state of the routers and the lifespans, read once."""

    def __init__(self, router: Router, policy: AppPolicy) -> None:
        self.router = router
        self.policy = policy
        self.lifespans = plan_lifespans(router.all_lifespans())
        self.lifespans_of: dict[int, list[Lifespan]] = {}
        for lifespan in self.lifespans:
            self.lifespans_of.setdefault(id(lifespan.owner), []).append(lifespan)
        self.late_states: list[Deferred] = []
        self.plans: dict[int, HandlerPlan] = {}  # by id of the endpoint
        self.metrics = router.metrics_route
        self.observer = _observer(router)

    def freeze(self) -> App:
        table = self.router.freeze(self.prepare, self.prepare_scope)
        routes = [e for e in table.endpoints if e.method is not None]  # not the fallbacks
        infos = tuple(route_info(e, self.plans[id(e)]) for e in routes)
        document = self.router.openapi_document
        if document is not None:
            document.serve(openapi_json(document, infos))
        return App(
            routes=infos,
            lifespans=self.lifespans,
            policy=self.policy,
            paths=build_paths(self.named(e) for e in routes),
            table=table,
            root=self.prepare_scope((self.router,)),
            late_states=tuple(self.late_states),
            has_websockets=any(e.is_websocket for e in table.endpoints),
            observer=self.observer,
        )

    def named(self, endpoint: Endpoint) -> NamedRoute:
        """A route as its name sees it: what path it builds and how its parameters are read."""
        assert endpoint.meta is not None  # a route's (only fallbacks have none)
        method = "WebSocket" if endpoint.is_websocket else endpoint.method
        types = path_types(self.plans[id(endpoint)].params, endpoint.param_names)
        return NamedRoute(endpoint.meta, f"{method} {endpoint.pattern}", endpoint.pattern, types)

    def states_of(self, routers: tuple[Owner, ...]) -> tuple[Any, ...]:
        """The state of a route owned by ``routers`` (outermost first): each router's values,
        then its lifespans (whose values exist once they are entered)."""
        return tuple(
            value
            for router in routers
            for value in (*router.states, *self.lifespans_of.get(id(router), ()))
        )

    def prepare_scope(self, routers: tuple[Owner, ...]) -> Unrouted:
        return Unrouted(_middlewares(routers), self.states_of(routers))

    def prepare(self, endpoint: Endpoint) -> PreparedEndpoint:
        states = self.states_of(endpoint.routers)
        multipart = next(
            (r.multipart_settings for r in reversed(endpoint.routers) if r.multipart_settings),
            None,
        )
        websocket = endpoint.is_websocket
        if websocket:
            _require_wsproto(endpoint.pattern)
        policy = self.policy
        handler = endpoint.handler
        if self.observer is not None and handler is self.metrics:
            handler = self.observer.scrape  # this app's own metrics
        plan = build_plan(
            handler,
            endpoint.param_names,
            states,
            multipart,
            websocket=websocket,
            max_json_size=policy.max_json_size,
            late_states=self.late_states,
        )
        self.plans[id(endpoint)] = plan
        middlewares = _middlewares(endpoint.routers)

        meta = endpoint.meta  # (a fallback has none)
        status = meta.status if meta is not None and meta.status is not None else 200

        async def call(request: Request) -> Response:
            # (the chain's innermost layer too: ``wrap`` below)
            try:
                request.body_reader.refuse_declared_excess()  # middleware sees the 413
                response = to_response(await plan.call(request), status)
                if type(response.body_stream) is FileSource:  # opened now: middleware sees it
                    return await resolve_file(response, request)
                return response
            except Exception as error:
                return answer_failure(error, request)

        async def upgrade(request: Request) -> Response:
            return await _accept_upgrade(plan, endpoint.subprotocols, policy.websocket, request)

        run = compose(middlewares, upgrade) if websocket else wrap(middlewares, call)
        route = endpoint.pattern if endpoint.method is not None else None  # (a fallback)
        limit, setting = policy.max_body_size, "max_body_size"
        if plan.multipart is not None:
            limit, setting = plan.multipart.max_total_size, "max_total_size"
        return PreparedEndpoint(endpoint, plan, run, states, limit, setting, route)


def _observer(router: Router) -> PrometheusObserver | None:
    """The metrics of the app ``router`` freezes into (``Router.metrics``), made anew for each
    app; ``ConfigurationError`` for a nested router's metrics."""
    for nested in router.walk()[1:]:
        if nested.metrics_route is not None:
            raise ConfigurationError(
                f"metrics({nested.metrics_route.path!r}) was called on a nested router: the "
                "metrics are the whole application's; call Router.metrics() on the outermost "
                "router instead"
            )
    if router.metrics_route is None:
        return None
    require_prometheus_client()
    from ._metrics.prometheus import PrometheusObserver

    return PrometheusObserver()


def _middlewares(routers: tuple[Owner, ...]) -> tuple[Middleware, ...]:
    middlewares = tuple(mw for router in routers for mw in router.middlewares)
    for middleware in middlewares:
        if not callable(middleware):
            raise ConfigurationError(f"middleware {middleware!r} is not callable")
    return middlewares


async def _accept_upgrade(
    plan: HandlerPlan,
    subprotocols: tuple[str, ...],
    policy: WebSocketPolicy,
    request: Request,
) -> Response:
    """Check the handshake, run the extractors, and answer 101 with the handler bound (it
    runs once the server has switched protocols)."""
    handshake = check_upgrade(request, policy.allowed_origins, subprotocols)
    kwargs = await plan.arguments(request)
    extensions: list[Any] = []
    answer: str | None = None
    if policy.compression:
        from ._websocket.deflate import negotiate_deflate

        extensions, answer = negotiate_deflate(handshake.extensions, policy.max_message_size)
    handler, param = plan.handler, plan.websocket_param
    assert param is not None

    async def run(connection: WebSocketConnection) -> Any:
        return await handler(**kwargs, **{param: connection})

    return accept(handshake, subprotocols, run, extensions, answer)


def _answer_unrouted(match: Any, request: Request) -> Response:
    if type(match) is NoRoute:
        raise Error.not_found(f"{request.uri.raw_path}")
    if type(match) is Redirect:
        query = request.uri.query
        location = f"{match.location}?{query}" if query else match.location
        return Response(308).with_header("location", location)
    if type(match) is WrongMethod:
        if match.websocket and request.method == "GET":
            raise upgrade_required()
        allow = ", ".join(match.allow)
        raise Error(405, f"method {request.method} is not allowed", headers={"allow": allow})
    if type(match) is AutoOptions:
        return Response(204).with_header("allow", ", ".join(match.allow))
    if type(match) is BadPath:
        raise Error.bad_request(match.message)
    raise AssertionError(f"unknown route match {match!r}")  # pragma: no cover


def _require_wsproto(pattern: str) -> None:
    try:
        import wsproto  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            f"the WebSocket route {pattern} needs wsproto: pip install 'trioframe[websocket]'"
        ) from None


def openapi_json(document: OpenAPIDocument, routes: tuple[RouteInfo, ...]) -> bytes:
    """The JSON of ``routes``' OpenAPI document as ``Router.openapi`` described it."""
    built = build_document(
        routes,
        title=document.title,
        version=document.version,
        description=document.description,
        servers=document.servers,
    )
    return json.dumps(built, separators=(",", ":"), ensure_ascii=False).encode()


def openapi_document(
    router_or_app: Router | App,
    *,
    title: str,
    version: str,
    description: str | None = None,
    servers: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``router_or_app`` (a ``Router`` is frozen first) as a
    dictionary, for tests and export: what ``Router.openapi`` serves. ``ConfigurationError``
    for a type no schema can describe."""
    app = router_or_app if isinstance(router_or_app, App) else freeze(router_or_app)
    return build_document(
        app.routes, title=title, version=version, description=description, servers=servers
    )
