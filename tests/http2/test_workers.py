"""The tasks that serve a connection's streams (``_server/http2/workers.py``): kept and reused
once streams overlap, one per stream otherwise; whatever a stream leaves on its worker
(a cancellation, a deadline, a context variable) never reaches the next stream it serves."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    RawPeer,
    connect,
    connections,
    h2_config,
    h2_server,
    request_fields,
    rst_stream,
)
from trioframe import Response, Router, Server, ServerConfig

VARIABLE: contextvars.ContextVar[str] = contextvars.ContextVar("variable", default="unset")


class Tasks:
    """``GET /task`` answers which task served it: its number in ``seen``; ``GET /variable``
    too, after it, what ``VARIABLE`` was, then sets it."""

    def __init__(self) -> None:
        self.seen: list[trio.lowlevel.Task] = []

    async def task(self) -> Response:
        current = trio.lowlevel.current_task()
        if current not in self.seen:
            self.seen.append(current)
        return Response.text(str(self.seen.index(current)))

    async def variable(self) -> Response:
        before = VARIABLE.get()
        VARIABLE.set("set by a stream before")
        served_by = (await self.task()).body.decode()
        return Response.text(f"{served_by} {before}")

    def router(self, lab: Lab) -> Router:
        return router(lab).get("/task", self.task).get("/variable", self.variable)


async def served_by(peer: RawPeer, stream_id: int) -> int:
    await peer.request(stream_id, b"GET", b"/task")
    result = await peer.response(stream_id)
    assert result.status == 200
    return int(result.body)


@attrs.frozen
class Setup:
    lab: Lab
    tasks: Tasks
    server: Server
    peer: RawPeer


@asynccontextmanager
async def connected(config: ServerConfig | None = None) -> AsyncIterator[Setup]:
    """A server of ``Lab`` and ``Tasks`` and one connection to it."""
    lab, tasks = Lab(), Tasks()
    async with h2_server(tasks.router(lab), config) as (server, nursery):
        yield Setup(lab, tasks, server, await connect(server, nursery))


async def overlapping(peer: RawPeer, lab: Lab) -> None:
    """Stream 1 waits (``/wait/hold``) while stream 3 is served: streams have overlapped."""
    await peer.request(1, b"GET", b"/wait/hold")
    await lab.started["hold"].wait()
    await served_by(peer, 3)


async def test_a_connection_whose_streams_overlap_reuses_its_workers() -> None:
    async with connected() as setup:
        lab, tasks, server, peer = setup.lab, setup.tasks, setup.server, setup.peer
        await overlapping(peer, lab)
        [connection] = connections(server)
        assert connection.workers.waiting == 1  # stream 3's, waiting for the next stream
        assert [await served_by(peer, sid) for sid in (5, 7, 9)] == [0, 0, 0]
        lab.release("hold")
        assert (await peer.response(1)).status == 200
        await peer.until(lambda: connection.active == 0)
        assert connection.workers.waiting == 2  # stream 1's too
        assert len(tasks.seen) == 1


async def test_a_connection_with_one_stream_at_a_time_keeps_no_worker() -> None:
    async with connected() as setup:
        server, peer = setup.server, setup.peer
        [connection] = connections(server)
        for number, sid in enumerate((1, 3, 5)):
            assert await served_by(peer, sid) == number  # a new task each time
            await peer.until(lambda: connection.active == 0)
            assert connection.workers.waiting == 0


async def test_a_stream_reset_before_its_worker_runs_is_cancelled() -> None:
    # HEADERS and RST_STREAM in one read: the stream is handed to a waiting worker and
    # reset before that worker runs; the reset cancels the handler all the same (the
    # worker's scope is the stream's from the moment it is handed over).
    async with connected() as setup:
        lab, server, peer = setup.lab, setup.server, setup.peer
        await overlapping(peer, lab)
        [connection] = connections(server)
        assert connection.workers.waiting == 1
        await peer.send(peer.headers_frame(5, request_fields(b"GET", b"/wait/x")), rst_stream(5))
        with trio.fail_after(5):
            await lab.finished["x"].wait()
        assert lab.cancelled == ["x"]
        # That worker's scope is spent: it ended, and the next stream has a new one.
        assert await served_by(peer, 7) == 1
        lab.release("hold")
        assert (await peer.response(1)).status == 200


async def test_a_deadline_a_stream_left_does_not_reach_the_next_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A response larger than the output bound makes its sender wait for the writer, with
    # send_timeout as a deadline on the stream's scope; the stream ends with that deadline
    # still set. The next stream its worker serves waits longer than send_timeout and is
    # still answered.
    config = h2_config(send_timeout=10, http2_max_output_buffer=1024)
    async with connected(config) as setup:
        lab, tasks, peer = setup.lab, setup.tasks, setup.peer
        await overlapping(peer, lab)
        await peer.request(5, b"GET", b"/big/4000")
        assert len((await peer.response(5)).body) == 4000
        await peer.request(7, b"GET", b"/wait/later")
        await lab.started["later"].wait()
        await trio.sleep(30)
        lab.release("later")
        assert (await peer.response(7)).status == 200
        assert lab.cancelled == []
        assert len(tasks.seen) == 1  # (one worker served 3 and 5, then 7 after it)


async def test_waiting_workers_end_with_their_connection() -> None:
    async with connected() as setup:
        lab, server, peer = setup.lab, setup.server, setup.peer
        await overlapping(peer, lab)
        lab.release("hold")
        assert (await peer.response(1)).status == 200
        [connection] = connections(server)
        await peer.until(lambda: connection.active == 0)
        assert connection.workers.waiting == 2
        await peer.stream.aclose()
        await trio.testing.wait_all_tasks_blocked()  # (a worker left waiting is blocked too)
        assert connections(server) == []
        assert connection.workers.waiting == 0


async def test_a_variable_a_stream_set_is_not_seen_by_the_next_stream_of_its_worker() -> None:
    async with connected() as setup:
        lab, peer = setup.lab, setup.peer
        await overlapping(peer, lab)
        answers = []
        for sid in (5, 7, 9):
            await peer.request(sid, b"GET", b"/variable")
            answers.append(bytes((await peer.response(sid)).body))
        assert answers == [b"0 unset"] * 3  # one worker, a fresh context each time


async def test_a_worker_whose_stream_was_cancelled_is_not_reused() -> None:
    # GET /task never waits: reset before its worker runs, its handler still returns
    # normally, and the cancellation that never arrived stays on the worker's scope; that
    # worker ends, and the next stream (which waits) is not cancelled by it.
    async with connected() as setup:
        lab, peer = setup.lab, setup.peer
        await overlapping(peer, lab)
        await peer.send(peer.headers_frame(5, request_fields(b"GET", b"/task")), rst_stream(5))
        await peer.request(7, b"GET", b"/wait/next")
        await lab.started["next"].wait()
        lab.release("next")
        assert (await peer.response(7)).status == 200
        assert lab.cancelled == []
        lab.release("hold")
        assert (await peer.response(1)).status == 200
