"""``BackgroundWork``: running the ``BackgroundTasks`` of the requests a server has answered.

``serve_exchange`` hands a request's tasks to ``start`` once the exchange is over; they run
in the background nursery the lifecycle holds (``lifespan.py``: it lives as long as the app
nursery and closes before the lifespans exit), one trio task per request calling its
functions in order, each function in a child task of its own (so in a fresh copy of the
context). A function that raises is logged with its traceback and the next one runs: nothing
here ever raises into the nursery. Graceful shutdown waits for them (``wait_idle``) until
``shutdown_timeout``; the lifecycle then cancels what is left.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from .._tracing import run_linked

if TYPE_CHECKING:
    from .._background import BackgroundTasks, Call

__all__ = ["BackgroundWork", "leaves"]


class BackgroundWork:
    """The background tasks of one server (or test client): where they run, and how many
    requests' tasks are still running."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        #: where tasks start; ``None`` while no lifecycle holds one open
        self.nursery: trio.Nursery | None = None
        #: requests whose tasks are still running
        self.running = 0
        self._idle: trio.Event | None = None

    def start(self, tasks: BackgroundTasks) -> None:
        """Start the functions ``tasks`` holds (none when the handler raised). Never waits,
        never raises: without a nursery (the server is not serving) they are dropped and
        logged."""
        calls = tasks.take()
        if not calls:
            return
        try:
            if self.nursery is None:
                raise RuntimeError("no background nursery is open")
            self.nursery.start_soon(self._run, calls, name="trioframe background tasks")
        except RuntimeError as exc:  # (a closed nursery refuses new tasks too)
            self.log.error("dropped %d background task(s): %s", len(calls), exc)
            return
        self.running += 1

    async def _run(self, calls: list[Call]) -> None:
        try:
            for fn, args, link in calls:
                try:
                    async with trio.open_nursery() as fresh:  # a fresh copy of the context
                        if link is None:
                            fresh.start_soon(fn, *args, name=_name(fn))
                        else:
                            fresh.start_soon(run_linked, *link, fn, *args, name=_name(fn))
                except* Exception as group:
                    for exc in leaves(group):
                        self.log.error("background task %s failed", _name(fn), exc_info=exc)
        finally:
            self.running -= 1
            if not self.running and self._idle is not None:
                self._idle.set()
                self._idle = None

    async def wait_idle(self) -> None:
        """Return once no background task runs. Cancellation: a plain wait."""
        while self.running:
            if self._idle is None:
                self._idle = trio.Event()
            await self._idle.wait()
        await trio.lowlevel.checkpoint()


def leaves(group: BaseException) -> list[BaseException]:
    """The exceptions inside ``group`` (nested groups flattened), or ``[group]``."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [group]


def _name(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{name}" if module else name
