"""A guard against event-loop stalls: fail the test when one task step runs too long.

trio runs every task step by step on one thread; while a step runs, every other task (every
other client of the server) waits. A parser that is slow on hostile input shows up as one
long step, whatever task it runs in. Use the guard around the requests of a test::

    async def test_hostile_query() -> None:
        async with TestClient(router) as client:
            with loop_guard():
                await client.get("/search?" + "a=%41&" * 1000)

On leaving, the test fails when a step took longer than the budget (100 ms by default),
naming the task and the duration; ``guard.worst`` holds the slowest step seen. The step
that enters the block and the one that leaves it are not timed.

Steps are timed in the thread's CPU time (``time.thread_time``): a stall is work on the
event loop's thread, and on a shared machine the wall clock also counts the time the
thread was not running at all (a step that takes 0.6 ms alone once measured 117 ms by the
wall clock, in a loaded CI run).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
import pytest
import trio

__all__ = ["DEFAULT_BUDGET", "LoopGuard", "Step", "loop_guard"]

#: The longest a single task step may hold the event loop, in seconds.
DEFAULT_BUDGET = 0.100


@attrs.frozen
class Step:
    """One task step: the task's name and how long the step ran, in seconds."""

    task: str
    seconds: float

    def __str__(self) -> str:
        return f"task {self.task!r} ran {self.seconds * 1000:.1f} ms"


class LoopGuard(trio.abc.Instrument):
    """A trio instrument timing every task step with ``clock`` and keeping the slowest one
    in ``worst``."""

    def __init__(self, clock: Callable[[], float] = time.thread_time) -> None:
        self.worst = Step("none", 0.0)
        self._clock = clock
        self._started: dict[trio.lowlevel.Task, float] = {}

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._started[task] = self._clock()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        started = self._started.pop(task, None)
        if started is None:  # the step that installed the guard
            return
        seconds = self._clock() - started
        if seconds > self.worst.seconds:
            self.worst = Step(task.name, seconds)


@contextmanager
def loop_guard(
    budget: float = DEFAULT_BUDGET, *, clock: Callable[[], float] = time.thread_time
) -> Iterator[LoopGuard]:
    """Time every task step inside the block; fail the test on leaving when one step ran
    longer than ``budget`` seconds. Use it inside a trio run (an async test). It collects
    garbage first, so that a full collection the test did not cause does not land in a
    step. ``clock`` is for testing the guard itself."""
    gc.collect()
    guard = LoopGuard(clock)
    trio.lowlevel.add_instrument(guard)
    try:
        yield guard
    finally:
        trio.lowlevel.remove_instrument(guard)
    if guard.worst.seconds > budget:
        pytest.fail(
            f"a task step held the event loop longer than {budget * 1000:.0f} ms: {guard.worst}",
            pytrace=False,
        )
