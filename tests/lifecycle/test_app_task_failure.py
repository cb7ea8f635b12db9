"""A task of the app nursery that raises: its own traceback is logged first, the server shuts
down gracefully (the request in flight completes), ``serve()`` raises that exception (not a
group), ``Server.run()`` and ``trioframe run`` exit with status 1."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import trio
import trio.testing

from trioframe import Response, Router, Server, ServerConfig, Shutdown
from trioframe.testing import TestClient

from .test_subprocess import APPS, ENV, REPO, _free_port

pytestmark = pytest.mark.loopback


async def test_serve_drains_then_raises_the_tasks_own_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    in_flight, fail = trio.Event(), trio.Event()

    async def refresh() -> None:
        await fail.wait()
        raise RuntimeError("the cache refresh failed")

    @asynccontextmanager
    async def cache(nursery: trio.Nursery) -> AsyncIterator[None]:
        nursery.start_soon(refresh)
        yield

    async def slow(shutdown: Shutdown) -> Response:
        in_flight.set()
        await shutdown.wait()  # still running when the task fails: it must complete
        return Response.text("done")

    server = Server(Router().lifespan(cache).get("/slow", slow), "127.0.0.1:0", ServerConfig())
    caplog.set_level(logging.INFO, logger="trioframe")
    raised: list[BaseException] = []

    async def serve(task_status: trio.TaskStatus[list[tuple[str, int]]]) -> None:
        try:
            await server.serve(task_status=task_status)
        except Exception as exc:
            raised.append(exc)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(serve)

            async def fail_while_in_flight() -> None:
                await in_flight.wait()
                fail.set()

            nursery.start_soon(fail_while_in_flight)
            async with httpx.AsyncClient() as client:
                response = await client.get(f"http://{host}:{port}/slow")
            assert (response.status_code, response.text) == (200, "done")
            assert response.headers["connection"] == "close"  # shut down gracefully
    [error] = raised
    assert type(error) is RuntimeError  # the task's own exception, not a group
    messages = [r.getMessage() for r in caplog.records]
    failed = messages.index("a task of the app nursery failed; shutting down")
    assert caplog.records[failed].exc_info is not None
    assert caplog.records[failed].exc_info[1] is error  # its own traceback, logged first


async def test_serve_raises_the_exception_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    async def refresh() -> None:
        raise RuntimeError("the cache refresh failed")

    @asynccontextmanager
    async def cache(nursery: trio.Nursery) -> AsyncIterator[None]:
        nursery.start_soon(refresh)
        yield

    server = Server(Router().lifespan(cache), "127.0.0.1:0")
    with trio.fail_after(10), pytest.raises(RuntimeError, match="cache refresh failed"):
        await server.serve()
    [record] = [r for r in caplog.records if r.exc_info is not None]
    assert record.name == "trioframe"
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


async def test_the_test_client_raises_it_on_leaving() -> None:
    async def refresh() -> None:
        raise RuntimeError("the cache refresh failed")

    @asynccontextmanager
    async def cache(nursery: trio.Nursery) -> AsyncIterator[None]:
        nursery.start_soon(refresh)
        yield

    with pytest.raises(RuntimeError, match="cache refresh failed"):
        async with TestClient(Router().lifespan(cache)):
            await trio.testing.wait_all_tasks_blocked()  # the task has failed


@pytest.mark.parametrize("how", ["Server.run", "trioframe run"])
async def test_the_process_exits_1_with_the_tasks_traceback(how: str) -> None:
    port = str(_free_port())
    if how == "Server.run":
        command = [sys.executable, str(APPS / "failing_task.py"), port]
    else:
        target = "tests.lifecycle.apps.failing_task:router"
        command = [sys.executable, "-m", "trioframe", "run", target, "--port", port]
    with trio.fail_after(20):
        result = await trio.run_process(
            command,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=ENV,
            cwd=str(REPO),
        )
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert "Traceback (most recent call last)" in stderr
    assert "in refresh_cache" in stderr
    assert "RuntimeError: the cache refresh failed" in stderr
    assert "ExceptionGroup" not in stderr
    assert stderr.index("refresh_cache") < stderr.index("stopped after a graceful shutdown")
