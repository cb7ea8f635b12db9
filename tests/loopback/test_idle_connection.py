"""What an idle HTTP/1.1 keep-alive connection holds while it waits for its next request:
one task (the disconnect watcher starts the first time a handler blocks) and nothing of its
last request. ``bench/memory.py`` measures the bytes; these tests pin what makes them few."""

from __future__ import annotations

import gc
import sys
import weakref

import trio
import trio.lowlevel
import trio.testing

from trioframe import Request, Response, Router
from trioframe._protocol.request_head import RequestHead

from ._support import RawConnection, serving, simple_get


def connection_tasks() -> list[trio.lowlevel.Task]:
    """The connection tasks of the server running in this trio run."""
    found: list[trio.lowlevel.Task] = []
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        assert task is not None
        if task.name == "trioframe: connection":
            found.append(task)
        pending += [child for nursery in task.child_nurseries for child in nursery.child_tasks]
    return found


def tasks_under(task: trio.lowlevel.Task) -> int:
    nurseries = list(task.child_nurseries)
    count = 0
    while nurseries:
        nursery = nurseries.pop()
        count += len(nursery.child_tasks)
        nurseries += [n for child in nursery.child_tasks for n in child.child_nurseries]
    return count


async def test_the_watcher_task_starts_the_first_time_an_exchange_blocks() -> None:
    async def instant() -> Response:
        return Response.text("instant")

    async def waits() -> Response:
        await trio.lowlevel.checkpoint()
        return Response.text("waits")

    router = Router().get("/instant", instant).get("/waits", waits)
    watchers = []
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            for path in ("/instant", "/instant", "/waits", "/waits", "/instant"):
                await connection.send(simple_get(path))
                assert (await connection.read_response()).status == 200
                await trio.testing.wait_all_tasks_blocked()
                (task,) = connection_tasks()
                watchers.append(tasks_under(task))
            await connection.aclose()
    # Idle after handlers that never blocked: the connection is one task, nothing under it.
    assert watchers == [0, 0, 1, 1, 1]


async def test_an_idle_connection_holds_no_part_of_its_last_request() -> None:
    requests: list[weakref.ref[Request]] = []

    async def remember(request: Request) -> Response:
        requests.append(weakref.ref(request))
        return Response.text("ok")

    def heads_of_the_last_request() -> list[RequestHead]:
        llhttp = sys.modules.get("trioframe._protocol.http1_llhttp")
        if llhttp is not None:  # its known heads are the module's, not the connection's
            llhttp._KNOWN_HEADS.clear()
        gc.collect()
        return [o for o in gc.get_objects() if type(o) is RequestHead and o.target == target]

    target = b"/remembered?it=1"
    with trio.fail_after(10):
        async with serving(Router().post("/remembered", remember)) as served:
            connection = await RawConnection.open(served.host, served.port)
            body = b"x" * 100
            await connection.send(
                b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n%s" % (target, body)
            )
            assert (await connection.read_response()).status == 200
            await trio.testing.wait_all_tasks_blocked()  # the connection waits, idle
            assert heads_of_the_last_request() == []
            assert requests[0]() is None
            await connection.aclose()
