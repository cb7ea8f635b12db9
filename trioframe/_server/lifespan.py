"""Running an app's lifespans: the app nursery, entering in order, exiting in reverse.

``Lifecycle(lifespans, check).running()`` is an async context manager around everything that
serves. Entering opens the app nursery in a task of its own (so its tasks can be cancelled
without cancelling the caller), enters each lifespan in order, registering what it yields as
state, then runs ``check`` (``App.check_late_state``: the state known only now). Leaving
cancels the app nursery's tasks and waits until they have finished, then exits the lifespans
in reverse order: a background task never outlives what a lifespan closes.

An exception while entering, or from ``check``, exits the lifespans entered so far (in
reverse) and is raised as it is, not in an exception group; ``failed`` then names the lifespan
that raised (``None`` when ``check`` did). A task of the app nursery that raises cancels the
caller (the server) and comes out in an exception group, as from any trio nursery.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

import trio

from .._lifespan import Lifespan

__all__ = ["Lifecycle"]


class Lifecycle:
    """The lifespans of one frozen app, in the order they are entered, and the ``check`` to
    run once they all have (it raises what should stop the server from starting)."""

    def __init__(self, lifespans: Sequence[Lifespan], check: Callable[[], None]) -> None:
        self.lifespans = tuple(lifespans)
        self.check = check
        #: the lifespan whose entering raised, once one has
        self.failed: Lifespan | None = None

    def running(self) -> AbstractAsyncContextManager[None]:
        """Enter every lifespan for the duration of the ``async with`` block (see the module
        docstring). Cancellation while leaving still waits for the app nursery's tasks to
        finish (they are cancelled too) before the lifespans exit."""
        return self._running()

    @asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        if not self.lifespans:
            yield
            return
        failure: Exception | None = None
        finished = trio.Event()
        async with trio.open_nursery() as holder:
            app_nursery: trio.Nursery = await holder.start(_hold_app_nursery, finished)
            try:
                async with AsyncExitStack() as stack:
                    try:
                        await self._enter_all(stack, app_nursery)
                        self.check()
                        yield
                    finally:
                        app_nursery.cancel_scope.cancel()
                        with trio.CancelScope(shield=True):
                            await finished.wait()
            except Exception as exc:  # raised below, outside the nursery: not in a group
                failure = exc
            finally:
                for lifespan in self.lifespans:
                    lifespan.values = None
        if failure is not None:
            raise failure

    async def _enter_all(self, stack: AsyncExitStack, app_nursery: trio.Nursery) -> None:
        """Enter each lifespan onto ``stack``; raises what entering one raised (with a note
        naming it)."""
        for lifespan in self.lifespans:
            try:
                lifespan.accept(await stack.enter_async_context(lifespan.open(app_nursery)))
            except Exception as exc:
                self.failed = lifespan
                exc.add_note(f"(while entering the lifespan {lifespan.name})")
                raise


async def _hold_app_nursery(
    finished: trio.Event, *, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED
) -> None:
    """Open the app nursery, report it, and keep it open until it is cancelled."""
    try:
        async with trio.open_nursery() as nursery:
            task_status.started(nursery)
            await trio.sleep_forever()
    finally:
        finished.set()
