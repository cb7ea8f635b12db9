"""The application side of a request: route, call the handler, turn the outcome into a
``Response``.

``App`` is a frozen router: the trie and every handler's extractor plan are built once, in
the constructor. ``App.handle`` never raises except ``trio.Cancelled`` (and other
``BaseException``s): every ``Error`` and unexpected exception becomes a response with the
standard error body. It uses no sockets or streams.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import ConfigurationError, Error
from ._extract import HandlerPlan, build_plan
from ._extract.state import LateState
from ._files.resolve import resolve_file
from ._files.response import FileResponse
from ._lifespan import Lifespan, plan_lifespans
from ._protocol.websocket import is_websocket_upgrade
from ._response import Response, to_response
from ._routing.results import (
    WEBSOCKET,
    AutoOptions,
    BadPath,
    Endpoint,
    Found,
    MethodNotAllowed,
    NotFound,
    Redirect,
)
from ._websocket.accept import WebSocketPolicy, accept, check_upgrade, upgrade_required

if TYPE_CHECKING:
    from ._request import Request
    from ._routing.router import Router
    from ._websocket.connection import WebSocketConnection

__all__ = ["App", "Middleware", "Next", "PreparedEndpoint", "compose"]

log = logging.getLogger("trioframe")


#: ``await next(request)`` runs the rest of the chain and gives its response.
Next = Callable[["Request"], Awaitable[Response]]
#: A middleware: ``async (request, next) -> Response``, a function or an object.
Middleware = Callable[["Request", Next], Awaitable[Any]]


@attrs.frozen
class PreparedEndpoint:
    """A route's endpoint, its handler plan, and ``run``: the endpoint wrapped in the
    middleware of every router that owns it, composed once when the app is frozen.
    ``states`` are those routers' state values, outermost first (what ``request.state``
    searches)."""

    endpoint: Endpoint
    plan: HandlerPlan
    run: Next
    states: tuple[Any, ...] = ()


def _middlewares(routers: tuple[Router, ...]) -> list[Middleware]:
    return [mw for router in routers for mw in router.middlewares]


def _error_response(error: Exception, request: Request) -> Response:
    if isinstance(error, Error):
        return _render_error(error, request)
    log.error("unhandled error answering %s %s", request.method, request.uri, exc_info=error)
    return Response.error(500, "Internal Server Error")


def _endpoint_layer(terminal: Next) -> Next:
    """The innermost layer: the handler's outcome as a response (a ``JSONDecodeError`` from
    the handler, say from ``json.loads``, is the client's malformed JSON: 400)."""

    async def endpoint(request: Request) -> Response:
        try:
            return await terminal(request)
        except json.JSONDecodeError:
            return Response.error(400, "malformed JSON")
        except Exception as error:
            return _error_response(error, request)

    return endpoint


def _middleware_layer(middleware: Middleware, next_: Next) -> Next:
    """One middleware around ``next_``; what it raises, or a non-``Response`` it returns
    (a forgotten ``return``), becomes the response the layer around it sees."""

    async def layer(request: Request) -> Response:
        try:
            response = await middleware(request, next_)
            if not isinstance(response, Response):
                raise TypeError(f"middleware {middleware!r} returned {response!r}, not a Response")
            return response
        except Exception as error:
            return _error_response(error, request)

    return layer


def compose(middlewares: list[Middleware], terminal: Next) -> Next:
    """The chain: the first middleware runs outermost, ``terminal`` innermost. Each layer
    runs in the caller's task and cancel scope: no tasks, no threads. Cancellation passes
    through every layer."""
    chain = _endpoint_layer(terminal)
    for middleware in reversed(middlewares):
        chain = _middleware_layer(middleware, chain)
    return chain


class App:
    """A frozen router ready to answer requests. Raises ``ConfigurationError`` here, at
    freeze time, for anything wrong with the routes, handlers or middleware."""

    def __init__(
        self,
        router: Router,
        *,
        max_body_size: int = 10 * 1024 * 1024,
        max_json_size: int = 256 * 1024,
        websocket: WebSocketPolicy | None = None,
    ) -> None:
        self.router = router
        self.max_body_size = max_body_size
        self.max_json_size = max_json_size
        self.websocket = websocket or WebSocketPolicy()
        #: every lifespan, in the order they are entered; their values are state
        self.lifespans = plan_lifespans(router)
        self._lifespans_of: dict[Router, list[Lifespan]] = {}
        for lifespan in self.lifespans:
            self._lifespans_of.setdefault(lifespan.owner, []).append(lifespan)
        #: the ``State[T]`` that unannotated lifespans may provide: see ``check_late_state``
        self._late_states: list[LateState] = []
        self._table = router.freeze(self._prepare)
        self._has_websockets = any(e.is_websocket for e in self._table.endpoints)
        #: middleware around answers no endpoint gives (404, 405, 308, OPTIONS), per router scope
        self._unrouted_middlewares: dict[tuple[Router, ...], list[Middleware]] = {}
        #: the state values ``request.state`` finds for those answers, per router scope
        self._unrouted_states: dict[tuple[Router, ...], tuple[Any, ...]] = {}

    def _states_of(self, routers: tuple[Router, ...]) -> tuple[Any, ...]:
        """The state of a route owned by ``routers`` (outermost first): each router's values,
        then its lifespans (whose values exist once they are entered)."""
        return tuple(
            value
            for router in routers
            for value in (*router.states, *self._lifespans_of.get(router, ()))
        )

    def _prepare(self, endpoint: Endpoint) -> PreparedEndpoint:
        states = self._states_of(endpoint.routers)
        multipart = next(
            (r.multipart_settings for r in reversed(endpoint.routers) if r.multipart_settings),
            None,
        )
        websocket = endpoint.is_websocket
        if websocket:
            _require_wsproto(endpoint.pattern)
        plan = build_plan(
            endpoint.handler,
            endpoint.param_names,
            states,
            multipart,
            websocket=websocket,
            max_json_size=self.max_json_size,
            late_states=self._late_states,
        )
        middlewares = _middlewares(endpoint.routers)
        for middleware in middlewares:
            if not callable(middleware):
                raise ConfigurationError(f"middleware {middleware!r} is not callable")

        async def call(request: Request) -> Response:
            return await self._call(plan, request)

        async def upgrade(request: Request) -> Response:
            return await self._accept_upgrade(plan, endpoint.subprotocols, request)

        return PreparedEndpoint(
            endpoint, plan, compose(middlewares, upgrade if websocket else call), states
        )

    def check_late_state(self) -> None:
        """Once the lifespans have entered (and before a request is served): find the value of
        each ``State[T]`` that only a lifespan without a return annotation could provide.
        ``ConfigurationError`` naming the handler and parameter when none is a ``T``."""
        for late in self._late_states:
            late.resolve()

    async def handle(self, request: Request) -> Response:
        """Answer ``request`` through the middleware chain. Never raises but for
        cancellation (the handler's state is whatever it left): every failure becomes an
        error response that the middleware has seen. An accepted WebSocket upgrade is a
        ``WebSocketAccept`` (101) the server acts on."""
        if self._has_websockets and _asks_for_websocket(request):
            found = self._table.match(WEBSOCKET, request.uri.raw_path)
            if type(found) is Found:
                request.params = found.params
                request._route_states = found.target.states
                return await found.target.run(request)
        match = self._table.match(request.method, request.uri.raw_path)
        if type(match) is Found:
            request.params = match.params
            request._route_states = match.target.states
            return await match.target.run(request)
        if type(match) is NotFound and match.fallback is not None:
            request._route_states = match.fallback.states
            return await match.fallback.run(request)
        routers = getattr(match, "routers", None) or (self.router,)
        middlewares = self._unrouted_middlewares.get(routers)
        if middlewares is None:
            middlewares = self._unrouted_middlewares[routers] = _middlewares(routers)
            self._unrouted_states[routers] = self._states_of(routers)
        request._route_states = self._unrouted_states[routers]

        async def answer(request: Request) -> Response:
            return self._answer_unrouted(match, request)

        # The terminal is bound to this request's routing outcome, so the chain is composed
        # here: a few closures, and only for requests no endpoint answers.
        return await compose(middlewares, answer)(request)

    async def _call(self, plan: HandlerPlan, request: Request) -> Response:
        multipart = plan.multipart
        if multipart is not None:
            request.body_reader.limit_to(multipart.max_total_size, "max_total_size")
        else:
            request.body_reader.limit_to(self.max_body_size, "max_body_size")
        response = to_response(await plan.call(request))
        if type(response) is FileResponse:  # opened now: middleware sees the final answer
            return await resolve_file(response, request)
        return response

    async def _accept_upgrade(
        self, plan: HandlerPlan, subprotocols: tuple[str, ...], request: Request
    ) -> Response:
        """Check the handshake, run the extractors, and answer 101 with the handler bound
        (it runs once the server has switched protocols)."""
        policy = self.websocket
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

    def _answer_unrouted(self, match: Any, request: Request) -> Response:
        if type(match) is NotFound:
            raise Error.not_found(f"{request.uri.raw_path}")
        if type(match) is Redirect:
            query = request.uri.query
            location = f"{match.location}?{query}" if query else match.location
            return Response(308).with_header("location", location)
        if type(match) is MethodNotAllowed:
            if match.websocket and request.method == "GET":
                raise upgrade_required()
            allow = ", ".join(match.allow)
            raise Error(405, f"method {request.method} is not allowed", headers={"allow": allow})
        if type(match) is AutoOptions:
            return Response(204).with_header("allow", ", ".join(match.allow))
        if type(match) is BadPath:
            raise Error.bad_request(match.message)
        raise AssertionError(f"unknown route match {match!r}")  # pragma: no cover


def _asks_for_websocket(request: Request) -> bool:
    """An HTTP/1.1 upgrade to WebSocket, or an HTTP/2 extended CONNECT for one (RFC 8441)."""
    if request.method == "GET":
        return is_websocket_upgrade(b"GET", request.headers.raw)
    return request.method == "CONNECT" and request.connect_protocol == "websocket"


def _require_wsproto(pattern: str) -> None:
    try:
        import wsproto  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            f"the WebSocket route {pattern} needs wsproto: pip install 'trioframe[websocket]'"
        ) from None


def _render_error(error: Error, request: Request) -> Response:
    if error.status >= 500:
        log.error(
            "%s %s answered %d: %s",
            request.method,
            request.uri,
            error.status,
            error.message,
            exc_info=error.__cause__ is not None,
        )
    try:
        return Response.from_error(error)
    except ValueError:  # headers= held a value HTTP cannot carry
        log.exception("cannot render %r for %s %s", error, request.method, request.uri)
        return Response.error(500, "Internal Server Error")
