"""Lifespans as a frozen app knows them: ``Lifespan`` is one ``Router.lifespan(fn)``
registration, analysed once when the app is frozen, holding the value it yielded while it is
entered.

The function's return annotation (``AsyncIterator[T]``, ``AsyncGenerator[T, None]`` or
``AbstractAsyncContextManager[T]``) declares what it yields, so the handlers' ``State[T]``
parameters are checked at freeze time like any other state; the value actually yielded is
checked against the annotation when the lifespan is entered. ``tuple[A, B]`` declares one
state value per item. Without an annotation (or with ``Any``) the types are those of what it
yields, known once it has entered: the ``State[T]`` it may provide are checked then
(``_extract/state.py``). The server side (``_server/lifespan.py``) enters and exits them;
this module imports no trio.
"""

from __future__ import annotations

import collections.abc
import contextlib
import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from ._errors import ConfigurationError, Error
from ._request import StateProvider

__all__ = ["Lifespan", "plan_lifespans"]

#: Return annotations whose (first) argument is the type a lifespan yields.
_YIELDING = (
    collections.abc.AsyncIterator,
    collections.abc.AsyncGenerator,
    collections.abc.AsyncIterable,
    contextlib.AbstractAsyncContextManager,
)


T = TypeVar("T")
#: What ``_declared_type`` gives for a lifespan whose annotation does not say what it yields.
_UNDECLARED: Any = object()


def _name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None) or "?"
    return f"{module}.{getattr(function, '__qualname__', repr(function))}"


class Lifespan(StateProvider):
    """One registered lifespan of one frozen app.

    ``owner`` is the router that registered it (its value is state for that router's routes
    and those nested in it); ``declared`` whether its annotation says what it yields;
    ``provides`` the classes of its state values, one per value: those its annotation
    declares, or (``declared`` false) those of the values it yielded, known once it has
    entered; ``values`` what it yielded, one per class, while it is entered (``None`` before
    and after)."""

    __slots__ = (
        "declared",
        "function",
        "is_tuple",
        "name",
        "owner",
        "provides",
        "takes_nursery",
        "values",
    )

    def __init__(self, owner: object, function: Callable[..., Any]) -> None:
        self.owner = owner
        self.function = function
        self.name = _name(function)
        self.takes_nursery = self._arity() == 1
        declared = self._declared_type()
        self.declared = declared is not _UNDECLARED
        self.is_tuple = typing.get_origin(declared) is tuple
        items = typing.get_args(declared) if self.is_tuple else (declared,)
        if declared in (_UNDECLARED, None, type(None)):
            items = ()
        self.provides: tuple[type, ...] = tuple(self._as_class(item) for item in items)
        self.values: tuple[Any, ...] | None = None

    def __repr__(self) -> str:
        return f"<Lifespan {self.name}>"

    # -- freeze time ------------------------------------------------------------------------
    def _fail(self, reason: str) -> ConfigurationError:
        return ConfigurationError(f"lifespan {self.name}: {reason}")

    def _arity(self) -> int:
        function = self.function
        if not callable(function):
            raise self._fail("is not callable")
        if inspect.isasyncgenfunction(function):
            raise self._fail("is an async generator: decorate it with @asynccontextmanager")
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            return 0
        required = [
            p
            for p in parameters
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if len(required) > 1 or any(p.kind is p.KEYWORD_ONLY for p in required):
            raise self._fail("takes nothing or one positional parameter (the app nursery)")
        return len(required)

    def _declared_type(self) -> Any:
        """The type the annotation says is yielded; ``_UNDECLARED`` when it does not say (no
        annotation, no type argument, ``Any``). For a context manager class, the return
        annotation of its ``__aenter__``."""
        enter = getattr(self.function, "__aenter__", None)
        is_class = isinstance(self.function, type) and enter is not None
        try:
            hints = typing.get_type_hints(enter if is_class else self.function)
        except Exception as exc:
            raise self._fail(f"cannot resolve its annotations: {exc}") from exc
        annotation = hints.get("return")
        if is_class:
            annotation = self.function if annotation is typing.Self else annotation
            return _UNDECLARED if annotation in (None, Any) else annotation
        if annotation is None:
            return _UNDECLARED
        if typing.get_origin(annotation) in _YIELDING:
            args = typing.get_args(annotation)
            return args[0] if args and args[0] is not Any else _UNDECLARED
        raise self._fail(
            f"its return annotation {annotation!r} should be AsyncIterator[T] (for an "
            "@asynccontextmanager function) or AbstractAsyncContextManager[T]"
        )

    def _as_class(self, kind: Any) -> type:
        if isinstance(kind, type):
            return kind
        origin = typing.get_origin(kind)
        if isinstance(origin, type) and origin is not tuple:
            return origin
        raise self._fail(f"cannot register a value of type {kind!r} as state: name a class")

    def provided(self, kind: type[T]) -> T | None:
        """The value of class ``kind`` (or a subclass) this lifespan yielded, ``None`` when it
        declares none; ``Error`` (500) when it declares one but is not running."""
        index = next((i for i, cls in enumerate(self.provides) if issubclass(cls, kind)), None)
        return None if index is None else typing.cast(T, self.value(index))

    def state_step(self, kind: Any) -> Callable[[Any], Awaitable[Any]] | None:
        """The extractor step of a ``State[kind]`` this lifespan provides (it reads the first
        declared value of that class or a subclass, per request), or ``None``."""
        if not isinstance(kind, type):
            return None
        index = next((i for i, cls in enumerate(self.provides) if issubclass(cls, kind)), None)
        if index is None:
            return None

        async def from_lifespan(_request: Any) -> Any:
            return self.value(index)

        return from_lifespan

    # -- while serving ----------------------------------------------------------------------
    def open(self, nursery: object) -> contextlib.AbstractAsyncContextManager[Any]:
        """Call the function (with the app ``nursery`` when it takes one); its async context
        manager. ``ConfigurationError`` when it returns something else."""
        manager = self.function(nursery) if self.takes_nursery else self.function()
        if not (hasattr(manager, "__aenter__") and hasattr(manager, "__aexit__")):
            raise self._fail(
                f"returned {type(manager).__name__}, not an async context manager "
                "(decorate it with @asynccontextmanager)"
            )
        return typing.cast(contextlib.AbstractAsyncContextManager[Any], manager)

    def accept(self, value: Any) -> None:
        """Register what entering yielded, after checking it against the annotation
        (``ConfigurationError`` on a mismatch). Without one, the value's own class is
        registered (a tuple: each item's; ``None``: nothing)."""
        if not self.declared:
            items = () if value is None else value if isinstance(value, tuple) else (value,)
            self.provides = tuple(type(item) for item in items)
            self.values = tuple(items)
            return
        if not self.provides:
            if value is not None:
                raise self._fail(
                    f"yielded a {type(value).__name__} but its return annotation declares "
                    f"nothing: annotate it -> AsyncIterator[{type(value).__name__}]"
                )
            self.values = ()
            return
        if self.is_tuple and not (isinstance(value, tuple) and len(value) == len(self.provides)):
            raise self._fail(f"yielded {value!r}, not a tuple of {len(self.provides)} values")
        items = value if self.is_tuple else (value,)
        for item, kind in zip(items, self.provides, strict=True):
            if not isinstance(item, kind):
                raise self._fail(
                    f"yielded a {type(item).__name__} where its annotation declares {kind.__name__}"
                )
        self.values = tuple(items)

    def value(self, index: int) -> Any:
        """The ``index``-th value yielded. ``Error`` (500) when the lifespan is not entered
        (a request served without the server or test client running lifespans)."""
        values = self.values
        if values is None:
            raise Error.internal(f"the lifespan {self.name} is not running")
        return values[index]


def plan_lifespans(owned: Iterable[tuple[object, Callable[..., Any]]]) -> tuple[Lifespan, ...]:
    """A ``Lifespan`` for each ``(owner, function)`` pair (a router's ``all_lifespans()``: in
    the order they are entered); ``ConfigurationError`` for one that cannot be a lifespan."""
    return tuple(Lifespan(owner, function) for owner, function in owned)
