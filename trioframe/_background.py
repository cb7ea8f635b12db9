"""``BackgroundTasks``: work a handler asks to run after its response has been sent.

The handler (or a dependency: the same instance per request) adds async functions; the
server starts them once the exchange is over (``_server/background.py`` runs them). This
module only collects them: it imports no trio, so the extractor layer can name the class.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVarTuple

from ._tracing import Link, link_here

__all__ = ["BackgroundTasks"]

Ts = TypeVarTuple("Ts")

#: One call to make: the function, its positional arguments, and what its span links to
#: (``None`` unless ``Telemetry`` traced the request that added it).
Call = tuple[Callable[..., Awaitable[Any]], tuple[Any, ...], Link | None]


class BackgroundTasks:
    """Work to do after the response: take it as a parameter (``tasks: BackgroundTasks``)
    and ``tasks.add(fn, *args)``::

        async def sign_up(form: Form[SignUp], tasks: BackgroundTasks) -> Response:
            user = await create_user(form)
            tasks.add(send_welcome_email, user.email)
            return Response.json({"id": user.id}, status=201)

    What runs, and when (docs/pages.md, "Work after the response"):

    - the functions run once the response has been sent (a streamed body: once it has
      ended), in the order they were added, one after the other in one task of the app's
      background nursery: never in the connection's task, so a keep-alive connection
      serves its next request at once;
    - each runs in a fresh copy of the context (``contextvars``), outside the request's
      telemetry span: under ``Telemetry``, in a span of its own (named after the function)
      that links to the request's span instead of being its child;
    - a function that raises is logged (logger ``trioframe``, with its traceback) and the
      next one still runs; nothing else stops;
    - a client that goes away cancels neither the functions added so far nor those
      running: they run even when the handler was cancelled by a disconnect (or by any
      other cancellation, such as a ``TimeoutMiddleware`` deadline) after adding them;
    - a handler (or one of its extractors or dependencies) that *raises* has not done its
      work: what it added is dropped;
    - graceful shutdown waits for the running functions until ``shutdown_timeout``, then
      cancels them (a cancelled function's successors do not run).

    Only async functions are accepted: ``add`` raises ``TypeError`` for a plain function
    (blocking work belongs in ``await trio.to_thread.run_sync(...)`` inside an async one).
    WebSocket handlers cannot take it (a ``ConfigurationError`` at startup).
    """

    __slots__ = ("_calls", "_dropped")

    def __init__(self) -> None:
        self._calls: list[Call] = []
        self._dropped = False

    def __repr__(self) -> str:
        return f"<BackgroundTasks {len(self._calls)} added>"

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, fn: Callable[[*Ts], Awaitable[object]], /, *args: *Ts) -> None:
        """Run ``await fn(*args)`` after the response (see the class docstring). Never
        waits. Raises ``TypeError`` when ``fn`` is not an async function."""
        if not _is_async(fn):
            raise TypeError(
                f"BackgroundTasks.add needs an async function, not {fn!r} (wrap blocking "
                "work: async def job(): await trio.to_thread.run_sync(blocking))"
            )
        self._calls.append((fn, args, link_here()))

    def drop(self) -> None:
        """Forget the functions added so far and refuse to run any more: the handler raised
        (called by the chain before it answers the error)."""
        self._dropped = True
        self._calls.clear()

    def take(self) -> list[Call]:
        """The functions to run, once: a second call (or one after ``drop``) gives none."""
        calls, self._calls = self._calls, []
        return [] if self._dropped else calls


def _is_async(fn: object) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 (an object with async __call__)
    return call is not None and not inspect.isroutine(fn) and inspect.iscoroutinefunction(call)
