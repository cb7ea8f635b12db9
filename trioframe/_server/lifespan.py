"""Running an app's lifespans: the app nursery, entering in order, exiting in reverse.

``Lifecycle(lifespans, check).running()`` is an async context manager around everything that
serves. Entering opens the app nursery and the background nursery (where ``BackgroundWork``
runs the requests' ``BackgroundTasks``), each in a task of its own (so their tasks can be
cancelled without cancelling the caller), enters each lifespan in order, registering what it
yields as state, then runs ``check`` (``App.check_late_state``: the state known only now).
Leaving cancels both nurseries' tasks and waits until they have finished, then exits the
lifespans in reverse order: a background task never outlives what a lifespan closes.

An exception while entering, or from ``check``, exits the lifespans entered so far (in
reverse) and is raised as it is, not in an exception group; ``failed`` then names the lifespan
that raised (``None`` when ``check`` did).

A task of the app nursery that raises is logged at once with its own traceback (logger
``trioframe``), kept in ``task_failures``, and ``on_task_failure`` is called (the server
begins a graceful shutdown); trio cancels the app nursery's other tasks, but not the caller
nor the background nursery. Once the caller's block has ended and the lifespans have exited,
leaving raises that exception as it is (several: an ``ExceptionGroup`` of them).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

import trio

from .._lifespan import Lifespan
from .background import BackgroundWork, leaves

__all__ = ["Lifecycle"]

log = logging.getLogger("trioframe")


class Lifecycle:
    """The lifespans of one frozen app, in the order they are entered, and the ``check`` to
    run once they all have (it raises what should stop the server from starting)."""

    def __init__(
        self,
        lifespans: Sequence[Lifespan],
        check: Callable[[], None],
        background: BackgroundWork | None = None,
        on_task_failure: Callable[[], None] | None = None,
    ) -> None:
        self.lifespans = tuple(lifespans)
        self.check = check
        #: where the requests' background tasks run (its nursery is set while running)
        self.background = background
        self.on_task_failure = on_task_failure
        #: the lifespan whose entering raised, once one has
        self.failed: Lifespan | None = None
        #: what the app nursery's tasks raised (each logged when it happened)
        self.task_failures: list[Exception] = []

    def running(self) -> AbstractAsyncContextManager[None]:
        """Enter every lifespan for the duration of the ``async with`` block (see the module
        docstring). Cancellation while leaving still waits for the app nursery's tasks and
        the background tasks to finish (they are cancelled too) before the lifespans
        exit."""
        return self._running()

    @asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        failure: Exception | None = None
        app_finished, work_finished = trio.Event(), trio.Event()
        background = self.background
        async with trio.open_nursery() as holder:
            work_nursery: trio.Nursery = await holder.start(_hold_nursery, work_finished)
            if background is not None:
                background.nursery = work_nursery
            app_nursery: trio.Nursery | None = None
            if self.lifespans:
                app_nursery = await holder.start(self._hold_app_nursery, app_finished)
            else:
                app_finished.set()
            try:
                async with AsyncExitStack() as stack:
                    try:
                        if app_nursery is not None:
                            await self._enter_all(stack, app_nursery)
                            self.check()
                        yield
                    finally:
                        if background is not None:
                            background.nursery = None
                        work_nursery.cancel_scope.cancel()
                        if app_nursery is not None:
                            app_nursery.cancel_scope.cancel()
                        with trio.CancelScope(shield=True):
                            await work_finished.wait()
                            await app_finished.wait()
            except Exception as exc:  # raised below, outside the nursery: not in a group
                failure = exc
            finally:
                for lifespan in self.lifespans:
                    lifespan.values = None
        if failure is not None:
            raise failure
        if len(self.task_failures) == 1:
            raise self.task_failures[0]
        if self.task_failures:
            raise ExceptionGroup("tasks of the app nursery failed", self.task_failures)

    async def _hold_app_nursery(
        self,
        finished: trio.Event,
        *,
        task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Open the app nursery, report it, and keep it open until it is cancelled; a task
        that raises is logged and reported (see the module docstring), not raised."""
        try:
            async with trio.open_nursery() as nursery:
                task_status.started(nursery)
                await trio.sleep_forever()
        except* Exception as group:
            for exc in leaves(group):
                assert isinstance(exc, Exception)
                log.error("a task of the app nursery failed; shutting down", exc_info=exc)
                self.task_failures.append(exc)
            if self.on_task_failure is not None:
                self.on_task_failure()
        finally:
            finished.set()

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


async def _hold_nursery(
    finished: trio.Event, *, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED
) -> None:
    """Open a nursery, report it, and keep it open until it is cancelled."""
    try:
        async with trio.open_nursery() as nursery:
            task_status.started(nursery)
            await trio.sleep_forever()
    finally:
        finished.set()
