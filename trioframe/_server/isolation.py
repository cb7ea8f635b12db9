"""``in_context``: run a coroutine in a ``contextvars.Context`` of its own, inside whichever
trio task awaits it.

A trio task runs every step of its coroutine in the task's one context, so whatever a request
sets in a ``ContextVar`` would still be set for the next request the same task serves (the
requests of an HTTP/1.1 keep-alive connection, which behind a pooling proxy may come from
another client). The server therefore serves each request as
``in_context(base.copy(), serve(...))``, where ``base`` is the context its connection started
with: every request starts from that context, and nothing it sets is seen outside it (its
middleware, handler, streamed body and WebSocket session all run inside it). The tasks that
serve an HTTP/2 connection's streams one after another start each in a fresh copy instead
(``http2/workers.py``).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar

__all__ = ["in_context"]

T = TypeVar("T")


@types.coroutine
def in_context(
    context: Context,
    coro: Coroutine[Any, Any, T],
    blocked: Callable[[], object] | None = None,
) -> Generator[Any, Any, T]:
    """``await`` it to run ``coro`` with ``context`` as the current context and get what it
    returns (or what it raises, with its traceback). Each step of ``coro`` runs inside
    ``context.run``; what it yields to trio passes through unchanged, and so does what trio
    sends back. ``blocked``, when given, is called once, the first time ``coro`` waits (before
    trio sees it wait): a coroutine that never waits costs one ``context.run``.

    Cancellation: ``trio.Cancelled``, and any other exception thrown into the awaiting
    task at a step, is thrown into ``coro`` inside ``context``; ``coro`` handles it or it
    propagates out of the ``await``. ``close()`` on the awaitable closes ``coro`` (inside
    ``context``, so its ``finally`` blocks see its variables). ``context`` must not be entered
    elsewhere while a step runs (a new copy per coroutine never is)."""
    run = context.run
    send = coro.send
    try:
        trap = run(send, None)
    except StopIteration as done:  # the common case: the coroutine never waited
        return done.value  # type: ignore[no-any-return]
    if blocked is not None:
        blocked()
    while True:
        try:
            answer = yield trap
        except GeneratorExit:
            run(coro.close)
            raise
        except BaseException as exc:  # thrown into the task (a cancellation): into ``coro``
            try:
                trap = run(coro.throw, exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                trap = run(send, answer)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
