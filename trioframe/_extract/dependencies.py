"""``FromRequest`` classes as dependencies: reading what ``from_request`` asks for, once per
handler, and the step that resolves a class at most once per request.

``from_request(cls, request, ...)`` takes the request first; every further parameter is an
extractor annotation (``State[Db]``, ``Headers``, ``Query[Page]``, another ``FromRequest``)
that the handler's plan fills the same way it fills the handler's own parameters. The planner
(``plan.build_plan``) walks these parameters depth first, refuses cycles, and builds one step
per class; this module holds what concerns a single class.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import ConfigurationError, Error
from .._markers import FromRequest
from .._request import Request
from .params import MISSING
from .sources import Step

__all__ = [
    "DependencySignature",
    "dependency_name",
    "dependency_signature",
    "dependency_step",
]

#: (parameter name, annotation, default) for each parameter of ``from_request`` after the
#: request; ``MISSING`` for no default.
DependencySignature = tuple[tuple[str, Any, Any], ...]

#: The base class's ``from_request``, which only raises: a subclass must define its own.
_UNDEFINED = vars(FromRequest)["from_request"].__func__


def dependency_name(kind: type) -> str:
    """How messages name a dependency: ``Class.from_request``."""
    return f"{kind.__qualname__}.from_request"


def dependency_signature(kind: type[FromRequest], handler: str) -> DependencySignature:
    """The parameters ``kind.from_request`` takes after the request, with their annotations
    resolved and their defaults. Raises ``ConfigurationError`` naming ``handler`` and the dependency when
    ``from_request`` is missing, takes no request, has ``*args``/``**kwargs`` or a
    positional-only parameter after the request, or annotations that do not resolve."""
    where = f"handler {handler}, dependency {dependency_name(kind)}"
    method = kind.from_request
    if getattr(method, "__func__", None) is _UNDEFINED:
        raise ConfigurationError(f"{where}: {kind.__qualname__} does not define from_request")
    try:
        parameters = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"{where}: cannot read its signature: {exc}") from None
    if not parameters or parameters[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise ConfigurationError(f"{where}: it must take the request as its first parameter")
    rest = parameters[1:]
    for param in rest:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise ConfigurationError(
                f"{where}, parameter {param.name!r}: *args, **kwargs and positional-only "
                "parameters are not extractors"
            )
    if not rest:
        return ()
    hints = _annotations_of(method, [param.name for param in rest], where)
    return tuple(
        (
            param.name,
            hints.get(param.name, inspect.Parameter.empty),
            MISSING if param.default is param.empty else param.default,
        )
        for param in rest
    )


def _annotations_of(method: Callable[..., Any], names: list[str], where: str) -> dict[str, Any]:
    """The resolved annotations of the parameters ``names`` only: the request's annotation
    and the return type may name what is imported for type checkers alone."""
    function = inspect.unwrap(getattr(method, "__func__", method))
    wanted = {n: a for n, a in inspect.get_annotations(function).items() if n in names}
    holder = types.SimpleNamespace(__annotations__=wanted)
    try:
        return typing.get_type_hints(
            holder, globalns=getattr(function, "__globals__", None), include_extras=True
        )
    except Exception as exc:
        raise ConfigurationError(f"{where}: cannot resolve its annotations: {exc}") from exc


class _Failed:
    """A dependency that raised ``error`` for this request: later uses raise it again."""

    __slots__ = ("error",)

    def __init__(self, error: Error) -> None:
        self.error = error


def dependency_step(kind: type[FromRequest], steps: tuple[tuple[str, Step], ...]) -> Step:
    """The step giving ``kind``'s value for a request: the value already resolved for this
    request if there is one (or the ``Error`` it raised, raised again); otherwise ``steps``
    fill ``from_request``'s parameters in order, then it runs (awaited when it returns an
    awaitable) and its outcome is kept for the rest of the request. Other exceptions and
    cancellation are not kept: they end the request."""
    method: Callable[..., Any] = kind.from_request

    async def resolve(request: Request) -> Any:
        resolved = request._dependency_values
        if kind in resolved:
            outcome = resolved[kind]
            if type(outcome) is _Failed:
                raise outcome.error
            return outcome
        try:
            kwargs = {name: await step(request) for name, step in steps}
            value = method(request, **kwargs)
            if isinstance(value, Awaitable):
                value = await value
        except Error as error:
            resolved[kind] = _Failed(error)
            raise
        resolved[kind] = value
        return value

    return resolve
