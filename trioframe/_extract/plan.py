"""``build_plan``: analyse a handler once and return how to call it per request.

A (predicate → step factory) table maps each parameter's annotation to a step. A
``FromRequest`` parameter is a dependency: the parameters its ``from_request`` declares are
planned the same way, depth first, each class once per handler (``_Planner.dependency``).
The body readers found anywhere in that tree are checked together. Unknown annotations,
cycles and readers that cannot share the body are a ``ConfigurationError`` naming the
handler and the parameter, raised when the app is frozen, never at the first request.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import attrs

from .._background import BackgroundTasks
from .._codec.check import UnsupportedType, check_fields, check_json, check_path, type_name
from .._codec.constraints import constrained
from .._errors import ConfigurationError
from .._markers import Body, FromRequest, Marker, StreamedBody
from .._multipart.decoder import MultipartConfig
from .._multipart.fields import FormReading
from .._request import Request
from .._websocket.connection import WebSocketConnection
from .context import Deferred
from .credential_steps import credential_info, credential_step, is_credential
from .dependencies import dependency_name, dependency_signature, dependency_step
from .hints import suggestion
from .params import MISSING, ParamInfo, describe
from .request_steps import BY_CLASS, whole_request
from .returns import check_return
from .single import is_single, refuse_alias, single_info, single_step
from .sources import (
    Step,
    StepContext,
    extension_step,
    form_step,
    json_step,
    or_error,
    path_step,
    query_step,
    strip_error,
)
from .state import state_step

__all__ = ["HandlerPlan", "build_plan"]


_BY_CLASS = BY_CLASS

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
    if is_single(marker, annotation):
        return single_step(ctx, annotation, marker)
    kind = constrained(annotation)
    written = f"{marker.source.capitalize()}[{type_name(kind)}]"
    refuse_alias(ctx, annotation, written)
    step = _BY_MARKER[marker.source](ctx, kind)
    check = _TYPE_CHECKS.get(marker.source)
    if check is not None:
        try:
            check(kind)
        except UnsupportedType as exc:
            raise ctx.fail(f"{written}: {exc}") from None
    return step


#: (predicate on the annotation → step factory), tried in order.
STEP_TABLE: list[tuple[Callable[[Any], bool], Callable[[StepContext, Any], Step]]] = [
    (is_credential, credential_step),  # first: it refuses a marker beside the credential
    (lambda a: _marker(a) is not None, _annotated_step),
    (lambda a: _class_kind(a) is not None, lambda _ctx, a: _BY_CLASS[_class_kind(a)]),  # type: ignore[index]
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
    #: every parameter can be passed by position (the handler is called so: cheaper)
    positional: bool = False
    #: what each input is: the handler's parameters in order, each dependency's own inputs
    #: after it
    params: tuple[ParamInfo, ...] = ()
    #: the declared return type (``None`` when the handler declares none); a value type is
    #: written as JSON (``_response.to_response``)
    returns: Any = None

    async def arguments(self, request: Request) -> dict[str, Any]:
        """Run every step: the handler's keyword arguments. Raises the steps' ``Error``s."""
        return {name: await step(request) for name, step in self.steps}

    async def call(self, request: Request) -> Any:
        """Fill the arguments and await the handler. Cancellation passes straight through."""
        if not self.steps:
            return await self.handler()
        values = []  # a loop: an async comprehension is a function object and frame more
        for _, step in self.steps:
            if step is whole_request and request.take_arrived_body():
                values.append(request)  # its body is all there: no coroutine to run
            else:
                values.append(await step(request))
        if self.positional:
            return await self.handler(*values)
        return await self.handler(
            **{name: value for (name, _), value in zip(self.steps, values, strict=True)}
        )


def _handler_name(handler: Callable[..., Any]) -> str:
    module = getattr(handler, "__module__", None) or "?"
    return f"{module}.{getattr(handler, '__qualname__', type(handler).__qualname__)}"


def _streamed_body_step(kind: type[StreamedBody], config: MultipartConfig) -> Step:
    make: Any = kind  # a StreamedBody subclass takes (request, config)

    async def streamed(request: Request) -> StreamedBody:
        result: StreamedBody = make(request, config)
        return result

    return streamed


def _body_reader(annotation: Any) -> str | None:
    """Which kind of body reader an annotation is (``Request``, ``Body``, ``Json``, ``Form``,
    ``Multipart``), ``None`` when it does not read the body."""
    marker = _marker(annotation)
    if marker is not None:
        return {"json": "Json", "form": "Form"}.get(marker.source)
    if isinstance(annotation, type):
        if issubclass(annotation, StreamedBody):
            return "Multipart"
        if issubclass(annotation, Request):
            return "Request"
        if issubclass(annotation, Body):
            return "Body"
    return None


def _is_websocket(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, WebSocketConnection)


#: Readers that take a multipart body too: beside a streamed one (``Multipart``) they would
#: find it gone, and beside a ``Form`` they make it read from the buffered body.
_READS_ANY_BODY = frozenset({"Request", "Body", "Form", "Multipart"})


@attrs.define
class _Planner:
    """One handler's planning: the settings every step factory may need, the body readers
    found anywhere in the dependency tree (kind, where), and the ``FromRequest`` classes
    planned so far (each class gets one step per handler) or being planned (a cycle)."""

    handler: str
    route_params: tuple[str, ...]
    states: tuple[Any, ...]
    multipart: MultipartConfig
    websocket: bool
    max_json_size: int
    late_states: list[Deferred]
    form_reading: FormReading = attrs.Factory(FormReading)
    readers: list[tuple[str, str]] = attrs.Factory(list)
    planned: dict[type, Step] = attrs.Factory(dict)
    resolving: list[type] = attrs.Factory(list)
    params: list[ParamInfo] = attrs.Factory(list)

    def learned(self, ctx: StepContext, annotation: Any) -> None:
        """Keep what the parameter of ``ctx`` is (see ``ParamInfo``; ``X | Error`` is an X)."""
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            rest = strip_error(typing.get_args(annotation))
            annotation = rest[0] if len(rest) == 1 else annotation
        if is_credential(annotation):
            self.params.append(credential_info(ctx, annotation))
            return
        marker = _marker(annotation)
        reader = _body_reader(annotation)
        if marker is not None and is_single(marker, annotation):
            self.params.append(single_info(ctx, annotation, marker))
            return
        if marker is not None:
            kind = marker.source
        elif reader == "Multipart":
            kind = "multipart"
        elif reader == "Body":
            kind = "body"
        elif _is_custom(annotation):
            kind = "dependency"
        else:
            kind = "request"
        self.params.append(describe(ctx.parameter, annotation, kind, ctx.default, ctx.dependency))

    def context(
        self, parameter: str, dependency: str | None = None, default: Any = MISSING
    ) -> StepContext:
        return StepContext(
            self.handler,
            parameter,
            self.route_params,
            self.states,
            self.max_json_size,
            dependency=dependency,
            multipart=self.multipart,
            form_reading=self.form_reading,
            late_states=self.late_states,
            default=default,
        )

    def step_for(self, ctx: StepContext, annotation: Any) -> Step:
        """The step for one parameter of the handler or of a dependency."""
        if annotation is inspect.Parameter.empty:
            raise ctx.fail(f"the parameter has no annotation{suggestion(ctx, annotation)}")
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            rest = strip_error(typing.get_args(annotation))
            if len(rest) < len(typing.get_args(annotation)):  # `X | Error`
                inner = rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007
                return or_error(self.step_for(ctx, inner))
        if _is_websocket(annotation):
            raise ctx.fail("WebSocketConnection is only available to a WebSocket handler itself")
        if self.websocket and annotation is BackgroundTasks:
            raise ctx.fail(
                "BackgroundTasks run after a response, which a WebSocket session does not "
                "have: start the work from the handler (it runs as long as the session)"
            )
        reader = _body_reader(annotation)
        if reader is not None:
            if self.websocket and reader != "Request":  # a Request's body is b"" there
                raise ctx.fail("a WebSocket upgrade request has no body to extract")
            where = f"{ctx.parameter!r}"
            if ctx.dependency is not None:
                where = f"{where} of {ctx.dependency}"
            self.readers.append((reader, where))
        if reader == "Multipart":
            return _streamed_body_step(annotation, self.multipart)
        if _is_custom(annotation):
            return self.dependency(annotation)
        for predicate, factory in STEP_TABLE:
            if predicate(annotation):
                return factory(ctx, annotation)
        raise ctx.fail(
            f"no extractor for annotation {type_name(annotation)}{suggestion(ctx, annotation)}"
        )

    def dependency(self, kind: type[FromRequest]) -> Step:
        """The one step resolving ``kind`` in this plan, its own parameters planned first."""
        step = self.planned.get(kind)
        if step is not None:
            return step
        if kind in self.resolving:
            cycle = [*self.resolving[self.resolving.index(kind) :], kind]
            names = " -> ".join(k.__qualname__ for k in cycle)
            raise ConfigurationError(f"handler {self.handler}: dependency cycle {names}")
        self.resolving.append(kind)
        name = dependency_name(kind)
        steps = []
        for param, annotation, default in dependency_signature(kind, self.handler):
            ctx = self.context(param, name, default)
            steps.append((param, self.step_for(ctx, annotation)))
            self.learned(ctx, annotation)
        self.resolving.pop()
        step = self.planned[kind] = dependency_step(kind, tuple(steps))
        return step

    def check_body_readers(self) -> None:
        """Refuse two readers that cannot share the body; decide how ``Form`` reads it."""
        kinds = [kind for kind, _ in self.readers]
        if "Multipart" in kinds:
            stream = self.readers[kinds.index("Multipart")]
            for other in self.readers:
                if other is not stream and other[0] in _READS_ANY_BODY:
                    raise ConfigurationError(
                        f"handler {self.handler}: {other[1]} ({other[0]}) and {stream[1]} "
                        "(Multipart) both read the body, which Multipart streams once; "
                        "take one or the other"
                    )
        sharing = [kind for kind in kinds if kind in _READS_ANY_BODY]
        self.form_reading.streams = sharing == ["Form"]


def build_plan(
    handler: Callable[..., Any],
    route_params: tuple[str, ...] = (),
    states: tuple[Any, ...] = (),
    multipart: MultipartConfig | None = None,
    *,
    websocket: bool = False,
    max_json_size: int = 256 * 1024,
    late_states: list[Deferred] | None = None,
) -> HandlerPlan:
    """Analyse ``handler`` once. Raises ``ConfigurationError`` for a non-async handler or a
    parameter no extractor understands; for a WebSocket handler (``websocket=True``) also
    when it does not take exactly one ``WebSocketConnection`` or takes a body extractor
    (``Request`` is not one there: an upgrade request's body is empty). The ``State[T]``
    steps to decide once the lifespans have entered are added to ``late_states``."""
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
    planner = _Planner(
        name,
        route_params,
        states,
        multipart or MultipartConfig(),
        websocket,
        max_json_size,
        [] if late_states is None else late_states,
    )
    steps: list[tuple[str, Step]] = []
    sockets: list[str] = []
    positional = True
    for param in inspect.signature(handler).parameters.values():
        default = MISSING if param.default is param.empty else param.default
        ctx = planner.context(param.name, default=default)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ctx.fail("*args/**kwargs are not extractors")
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if _is_websocket(annotation):
            if not websocket:
                raise ctx.fail("WebSocketConnection is only available on Router.websocket routes")
            sockets.append(param.name)
            planner.params.append(describe(param.name, annotation, "websocket"))
            continue
        described = len(planner.params)
        steps.append((param.name, planner.step_for(ctx, annotation)))
        planner.params.insert(described, _described(planner, ctx, annotation))
        positional = positional and param.kind is not param.KEYWORD_ONLY
    planner.check_body_readers()
    if websocket and len(sockets) != 1:
        raise ConfigurationError(
            f"WebSocket handler {name} must take exactly one WebSocketConnection parameter"
        )
    streams = any(kind == "Multipart" for kind, _ in planner.readers)
    returns = hints.get("return")
    if not websocket:
        check_return(name, returns)
    return HandlerPlan(
        handler=handler,
        steps=tuple(steps),
        name=name,
        multipart=planner.multipart if streams else None,
        websocket_param=sockets[0] if sockets else None,
        positional=positional and not sockets,
        params=tuple(planner.params),
        returns=returns,
    )


def _described(planner: _Planner, ctx: StepContext, annotation: Any) -> ParamInfo:
    """The handler parameter's own ``ParamInfo`` (its dependency's inputs, if it is one, were
    learned while its step was planned, and follow it)."""
    planner.learned(ctx, annotation)
    return planner.params.pop()
