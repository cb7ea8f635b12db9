"""``State[T]``: the step that reads a state value, planned once per parameter.

The value is looked up among the state the route can see, outermost router first: the values
given to ``Router.state`` and the lifespans' values. A lifespan annotated with what it yields
is known at freeze time, so a ``State[T]`` that nothing provides is a ``ConfigurationError``
then. A lifespan without that annotation says what it provides only once it has entered: a
``State[T]`` it may provide is a ``LateState``, whose lookup the lifecycle makes
(``resolve``) after the lifespans have entered and before the first connection is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import ConfigurationError, Error
from .._lifespan import Lifespan
from .._request import Request
from .context import Step, StepContext

__all__ = ["LateState", "state_step"]


def state_step(ctx: StepContext, kind: Any) -> Step:
    """The step of ``State[kind]``; a ``LateState`` (also added to ``ctx.late_states``) when
    an unannotated lifespan comes before any value that provides it. ``ConfigurationError``
    when nothing can provide it."""
    for index, found in enumerate(ctx.states):
        if isinstance(found, Lifespan) and not found.declared:
            late = LateState(ctx, kind, ctx.states[index:])
            ctx.late_states.append(late)
            return late
        step = _step_from(found, kind)
        if step is not None:
            return step
    name = _name(kind)
    raise ctx.fail(
        f"no state of type {name} is registered: register one with Router.state(...) on this "
        f"route's router or one it is nested in, or yield one from a lifespan registered there "
        f"(annotated -> AsyncIterator[{name}] to have it checked before the lifespans run)"
    )


def _step_from(found: Any, kind: Any) -> Step | None:
    """The step reading ``kind`` from one state entry, ``None`` when it holds no ``kind``."""
    if isinstance(found, Lifespan):  # its value exists once the lifespan is entered
        return found.state_step(kind)
    if isinstance(found, kind):
        return _constant_step(found)
    return None


def _constant_step(value: Any) -> Step:
    async def constant(_: Request) -> Any:
        return value

    return constant


def _name(kind: Any) -> str:
    return str(getattr(kind, "__name__", kind))


class LateState:
    """The step of a ``State[T]`` whose value an unannotated lifespan may provide, decided
    by ``resolve`` once the lifespans have entered. Until then (and for an app whose
    lifespans are not running) a request reading it is a 500."""

    def __init__(self, ctx: StepContext, kind: Any, candidates: Sequence[Any]) -> None:
        self._ctx = ctx
        self._kind = kind
        self._candidates = tuple(candidates)
        self._step: Step | None = None

    async def __call__(self, request: Request) -> Any:
        step = self._step
        if step is None:
            raise Error.internal(
                f"State[{_name(self._kind)}] is read before the lifespans have entered"
            )
        return await step(request)

    def resolve(self) -> None:
        """Find the value among the entered lifespans' and the registered ones (the same
        order as at freeze time). ``ConfigurationError`` naming the handler and parameter,
        and saying what the lifespans yielded, when none is a ``T``."""
        self._step = None
        for found in self._candidates:
            step = _step_from(found, self._kind)
            if step is not None:
                self._step = step
                return
        raise self._failure()

    def _failure(self) -> ConfigurationError:
        name = _name(self._kind)
        yielded = "; ".join(
            f"the lifespan {found.name} yielded {_described(found)}"
            for found in self._candidates
            if isinstance(found, Lifespan) and not found.declared
        )
        return self._ctx.fail(
            f"no state of type {name} is registered: {yielded}. Yield a {name} from one of "
            f"those lifespans, or register one with Router.state(...)"
        )


def _described(lifespan: Lifespan) -> str:
    """What an entered lifespan yielded, in words: ``a Cache``, ``a Cache and a Pool``,
    ``nothing``."""
    kinds = [f"a {kind.__name__}" for kind in lifespan.provides]
    if not kinds:
        return "nothing"
    return kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]
