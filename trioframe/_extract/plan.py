"""``build_plan``: analyse a handler once and return how to call it per request.

A (predicate → step factory) table maps each parameter's annotation to a step. Unknown
annotations are a ``ConfigurationError`` naming the handler and the parameter, raised when
the app is frozen, never at the first request.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from .._errors import ConfigurationError
from .._request import Request

__all__ = ["HandlerPlan", "Step", "build_plan"]

#: A step produces one argument from the request.
Step = Callable[[Request], Awaitable[Any]]


async def _whole_request(request: Request) -> Request:
    await request.read_body()
    return request


def _is_request(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Request)


#: (predicate on the annotation → step factory taking the parameter name)
STEP_TABLE: list[tuple[Callable[[Any], bool], Callable[[str, Any], Step]]] = [
    (_is_request, lambda _name, _annotation: _whole_request),
]


@attrs.frozen
class HandlerPlan:
    """How to call one handler: its function and one step per parameter, in order."""

    handler: Callable[..., Awaitable[Any]]
    steps: tuple[tuple[str, Step], ...]
    name: str

    async def call(self, request: Request) -> Any:
        """Fill the arguments and await the handler. Cancellation passes straight through."""
        if not self.steps:
            return await self.handler()
        kwargs = {name: await step(request) for name, step in self.steps}
        return await self.handler(**kwargs)


def _handler_name(handler: Callable[..., Any]) -> str:
    module = getattr(handler, "__module__", None) or "?"
    return f"{module}.{getattr(handler, '__qualname__', repr(handler))}"


def build_plan(handler: Callable[..., Any]) -> HandlerPlan:
    """Analyse ``handler`` once. Raises ``ConfigurationError`` for a non-async handler or a
    parameter no extractor understands."""
    name = _handler_name(handler)
    if not inspect.iscoroutinefunction(handler) and not inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - async callable objects
    ):
        raise ConfigurationError(f"handler {name} must be an async function")
    # An object with ``async def __call__`` is analysed through that method.
    target = handler if inspect.isroutine(handler) else type(handler).__call__
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot resolve the annotations of handler {name}: {exc}"
        ) from exc
    steps: list[tuple[str, Step]] = []
    for param in inspect.signature(handler).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigurationError(f"handler {name}: *args/**kwargs are not extractors")
        annotation = hints.get(param.name, inspect.Parameter.empty)
        for predicate, factory in STEP_TABLE:
            if predicate(annotation):
                steps.append((param.name, factory(param.name, annotation)))
                break
        else:
            raise ConfigurationError(
                f"handler {name}: parameter {param.name!r} has no extractor for "
                f"annotation {annotation!r}"
            )
    return HandlerPlan(handler=handler, steps=tuple(steps), name=name)
