"""``build_plan``: analyse a handler once and return how to call it per request.

A (predicate → step factory) table maps each parameter's annotation to a step. Unknown
annotations are a ``ConfigurationError`` naming the handler and the parameter, raised when
the app is frozen, never at the first request.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import attrs

from .._errors import ConfigurationError
from .._http.cookies import CookieJar
from .._http.headers import Headers
from .._http.method import Method
from .._http.url import Uri
from .._multipart.decoder import MultipartConfig
from .._request import Request
from .._websocket.connection import WebSocketConnection
from .check import UnsupportedType, check_fields, check_json, check_path, type_name
from .markers import Body, FromRequest, Marker, StreamedBody
from .sources import (
    Step,
    StepContext,
    body_step,
    extension_step,
    form_step,
    from_request_step,
    json_step,
    or_error,
    path_step,
    query_step,
    state_step,
    strip_error,
)

__all__ = ["HandlerPlan", "build_plan"]


async def _whole_request(request: Request) -> Request:
    await request.read_body()
    return request


async def _headers(request: Request) -> Headers:
    return request.headers


async def _method(request: Request) -> Method:
    return request.method


async def _uri(request: Request) -> Uri:
    return request.uri


async def _cookies(request: Request) -> CookieJar:
    return request.cookies()


_BY_CLASS: dict[type, Step] = {
    Request: _whole_request,
    Headers: _headers,
    Method: _method,
    Uri: _uri,
    Body: body_step,
    CookieJar: _cookies,
}

_BY_MARKER: dict[str, Callable[[StepContext, Any], Step]] = {
    "path": path_step,
    "query": query_step,
    "json": json_step,
    "form": form_step,
    "state": state_step,
    "extension": extension_step,
}


def _marker(annotation: Any) -> Marker | None:
    if typing.get_origin(annotation) is Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, Marker):
                return meta
    return None


def _class_kind(annotation: Any) -> type | None:
    if isinstance(annotation, type):
        for kind in _BY_CLASS:
            if issubclass(annotation, kind):
                return kind
    return None


def _is_custom(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, FromRequest)


#: The startup check of each converting extractor: its ``T`` can be produced at every depth.
_TYPE_CHECKS: dict[str, Callable[[Any], None]] = {
    "path": check_path,
    "query": lambda kind: check_fields(kind, "query"),
    "form": lambda kind: check_fields(kind, "form"),
    "json": check_json,
}


def _annotated_step(ctx: StepContext, annotation: Any) -> Step:
    marker = _marker(annotation)
    assert marker is not None
    kind = typing.get_args(annotation)[0]
    step = _BY_MARKER[marker.source](ctx, kind)
    check = _TYPE_CHECKS.get(marker.source)
    if check is not None:
        try:
            check(kind)
        except UnsupportedType as exc:
            raise ctx.fail(f"{marker.source.capitalize()}[{type_name(kind)}]: {exc}") from None
    return step


#: (predicate on the annotation → step factory), tried in order.
STEP_TABLE: list[tuple[Callable[[Any], bool], Callable[[StepContext, Any], Step]]] = [
    (lambda a: _marker(a) is not None, _annotated_step),
    (lambda a: _class_kind(a) is not None, lambda _ctx, a: _BY_CLASS[_class_kind(a)]),  # type: ignore[index]
    (_is_custom, lambda _ctx, a: from_request_step(a)),
]


@attrs.frozen
class HandlerPlan:
    """How to call one handler: its function and one step per parameter, in order.
    ``multipart`` holds the limits when the handler streams the body with ``Multipart``;
    ``websocket_param`` names the ``WebSocketConnection`` parameter of a WebSocket handler
    (it has no step: the server supplies the connection once the upgrade is accepted)."""

    handler: Callable[..., Awaitable[Any]]
    steps: tuple[tuple[str, Step], ...]
    name: str
    multipart: MultipartConfig | None = None
    websocket_param: str | None = None

    async def arguments(self, request: Request) -> dict[str, Any]:
        """Run every step: the handler's keyword arguments. Raises the steps' ``Error``s."""
        return {name: await step(request) for name, step in self.steps}

    async def call(self, request: Request) -> Any:
        """Fill the arguments and await the handler. Cancellation passes straight through."""
        if not self.steps:
            return await self.handler()
        kwargs = {name: await step(request) for name, step in self.steps}
        return await self.handler(**kwargs)


def _handler_name(handler: Callable[..., Any]) -> str:
    module = getattr(handler, "__module__", None) or "?"
    return f"{module}.{getattr(handler, '__qualname__', type(handler).__qualname__)}"


def _step_for(ctx: StepContext, annotation: Any) -> Step:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = strip_error(typing.get_args(annotation))
        if len(rest) < len(typing.get_args(annotation)):  # `X | Error`
            inner = rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007
            return or_error(_step_for(ctx, inner))
    for predicate, factory in STEP_TABLE:
        if predicate(annotation):
            return factory(ctx, annotation)
    if annotation is inspect.Parameter.empty:
        raise ctx.fail(
            "the parameter has no annotation; annotate it with an extractor "
            "(Path[int], Query[T], Json[T], Headers, ...)"
        )
    raise ctx.fail(f"no extractor for annotation {type_name(annotation)}")


def _streamed_body_step(kind: type[StreamedBody], config: MultipartConfig) -> Step:
    make: Any = kind  # a StreamedBody subclass takes (request, config)

    async def streamed(request: Request) -> StreamedBody:
        result: StreamedBody = make(request, config)
        return result

    return streamed


_BODY_MARKERS = frozenset({"json", "form"})


def _reads_body(annotation: Any) -> bool:
    """Whether an annotation consumes the request body (refused on WebSocket routes)."""
    marker = _marker(annotation)
    if marker is not None:
        return marker.source in _BODY_MARKERS
    return isinstance(annotation, type) and issubclass(annotation, Body | StreamedBody)


def _is_websocket(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, WebSocketConnection)


def build_plan(
    handler: Callable[..., Any],
    route_params: tuple[str, ...] = (),
    states: tuple[Any, ...] = (),
    multipart: MultipartConfig | None = None,
    *,
    websocket: bool = False,
    max_json_size: int = 256 * 1024,
) -> HandlerPlan:
    """Analyse ``handler`` once. Raises ``ConfigurationError`` for a non-async handler or a
    parameter no extractor understands; for a WebSocket handler (``websocket=True``) also
    when it does not take exactly one ``WebSocketConnection`` or takes a body extractor."""
    name = _handler_name(handler)
    call = handler if inspect.isroutine(handler) else type(handler).__call__
    if not inspect.iscoroutinefunction(call):
        raise ConfigurationError(f"handler {name} must be an async function")
    try:
        hints = typing.get_type_hints(call, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot resolve the annotations of handler {name}: {exc}"
        ) from exc
    steps: list[tuple[str, Step]] = []
    streams: list[str] = []
    buffers: list[str] = []
    sockets: list[str] = []
    for param in inspect.signature(handler).parameters.values():
        ctx = StepContext(name, param.name, route_params, states, max_json_size)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ctx.fail("*args/**kwargs are not extractors")
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if _is_websocket(annotation):
            if not websocket:
                raise ctx.fail("WebSocketConnection is only available on Router.websocket routes")
            sockets.append(param.name)
            continue
        if websocket and _reads_body(annotation):
            raise ctx.fail("a WebSocket upgrade request has no body to extract")
        if isinstance(annotation, type) and issubclass(annotation, StreamedBody):
            streams.append(param.name)
            limits = multipart or MultipartConfig()
            steps.append((param.name, _streamed_body_step(annotation, limits)))
            continue
        if _class_kind(annotation) is Request:
            buffers.append(param.name)
        steps.append((param.name, _step_for(ctx, annotation)))
    if streams and buffers:
        raise ConfigurationError(
            f"handler {name}: {buffers[0]!r} (Request) buffers the body and {streams[0]!r} "
            "(Multipart) streams it; take one or the other"
        )
    if websocket and len(sockets) != 1:
        raise ConfigurationError(
            f"WebSocket handler {name} must take exactly one WebSocketConnection parameter"
        )
    config = (multipart or MultipartConfig()) if streams else None
    return HandlerPlan(
        handler=handler,
        steps=tuple(steps),
        name=name,
        multipart=config,
        websocket_param=sockets[0] if sockets else None,
    )
