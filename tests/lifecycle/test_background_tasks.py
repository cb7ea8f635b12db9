"""``BackgroundTasks``: work that runs after the response, in memory (``TestClient``) and over
loopback sockets: order, after the response, a free keep-alive connection, failures logged,
disconnects, graceful shutdown."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
import trio
import trio.lowlevel
import trio.testing

from trioframe import (
    BackgroundTasks,
    ConfigurationError,
    Error,
    FromRequest,
    Request,
    Response,
    Router,
    ServerConfig,
    WebSocketConnection,
    freeze,
)
from trioframe.testing import TestClient

from ..loopback._support import RawConnection, serving, simple_get


class Audit(FromRequest):
    """A dependency that takes the request's BackgroundTasks too."""

    def __init__(self, tasks: BackgroundTasks) -> None:
        self.tasks = tasks

    @classmethod
    async def from_request(cls, request: Request, tasks: BackgroundTasks) -> Audit:
        return cls(tasks)


async def test_the_functions_run_in_order_with_the_dependencys_instance() -> None:
    ran: list[object] = []
    done = trio.Event()

    async def record(value: object) -> None:
        await trio.lowlevel.checkpoint()
        ran.append(value)

    async def finish() -> None:
        done.set()

    async def handler(tasks: BackgroundTasks, audit: Audit) -> Response:
        assert audit.tasks is tasks  # one instance per request
        tasks.add(record, 1)
        audit.tasks.add(record, 2)
        tasks.add(record, 3)
        tasks.add(finish)
        return Response.text("ok")

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).text == "ok"
        with trio.fail_after(5):
            await done.wait()
    assert ran == [1, 2, 3]


async def test_they_start_after_a_streamed_body_has_ended(
    autojump_clock: trio.testing.MockClock,
) -> None:
    body_ended = False
    seen: list[bool] = []

    async def check() -> None:
        seen.append(body_ended)

    async def handler(tasks: BackgroundTasks) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            nonlocal body_ended
            yield b"a"
            await trio.sleep(0.01)
            yield b"b"
            body_ended = True

        tasks.add(check)
        return Response.stream(chunks(), content_type="text/plain")

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).text == "ab"
    assert seen == [True]


async def test_a_handler_that_raises_drops_its_tasks() -> None:
    ran: list[str] = []

    async def job(name: str) -> None:
        ran.append(name)

    async def failing(tasks: BackgroundTasks) -> Response:
        tasks.add(job, "failing")
        raise Error.bad_request("no")

    async def fine(tasks: BackgroundTasks) -> Response:
        tasks.add(job, "fine")
        return Response.text("ok")

    async with TestClient(Router().get("/failing", failing).get("/fine", fine)) as client:
        assert (await client.get("/failing")).status_code == 400
        assert (await client.get("/fine")).status_code == 200
    assert ran == ["fine"]  # (leaving the client waits for the tasks)


async def test_a_failing_task_is_logged_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def broken() -> None:
        raise ValueError("the mail server said no")

    async def after() -> None:
        ran.append("after")

    async def handler(tasks: BackgroundTasks) -> Response:
        tasks.add(broken)
        tasks.add(after)
        return Response.text("ok")

    async with TestClient(Router().get("/", handler)) as client:
        for _ in range(2):
            assert (await client.get("/")).text == "ok"
            await trio.testing.wait_all_tasks_blocked()  # this request's tasks have run
    assert ran == ["after", "after"]
    failures = [r for r in caplog.records if "background task" in r.getMessage()]
    assert len(failures) == 2
    for record in failures:
        assert record.name == "trioframe"
        assert "broken failed" in record.getMessage()
        assert record.exc_info is not None and isinstance(record.exc_info[1], ValueError)
        assert "in broken" in caplog.text  # its own traceback


async def test_each_function_runs_in_a_fresh_context() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    seen: list[str] = []

    async def first() -> None:
        var.set("first")

    async def second() -> None:
        seen.append(var.get())

    async def handler(tasks: BackgroundTasks) -> Response:
        tasks.add(first)
        tasks.add(second)
        return Response.text("ok")

    async with TestClient(Router().get("/", handler)) as client:
        await client.get("/")
    assert seen == ["unset"]


def test_add_refuses_a_plain_function() -> None:
    def blocking() -> None: ...

    with pytest.raises(TypeError, match="needs an async function"):
        BackgroundTasks().add(blocking)  # type: ignore[arg-type]


def test_a_websocket_handler_cannot_take_them() -> None:
    async def chat(ws: WebSocketConnection, tasks: BackgroundTasks) -> None: ...

    with pytest.raises(ConfigurationError, match="BackgroundTasks"):
        freeze(Router().websocket("/chat", chat))


async def test_leaving_waits_then_cancels_at_shutdown_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    outcome: dict[str, str] = {}

    async def sleeper(name: str, seconds: float) -> None:
        try:
            await trio.sleep(seconds)
            outcome[name] = "finished"
        except trio.Cancelled:
            outcome[name] = "cancelled"
            raise

    async def handler(tasks: BackgroundTasks) -> Response:
        tasks.add(sleeper, "short", 5)
        tasks.add(sleeper, "long", 100)  # starts at 5 s, cancelled at 10 s
        return Response.text("ok")

    config = ServerConfig(shutdown_timeout=10)
    async with TestClient(Router().get("/", handler), config) as client:
        await client.get("/")
        left = trio.current_time()
    assert outcome == {"short": "finished", "long": "cancelled"}
    assert 10 <= trio.current_time() - left < 11


# -- over loopback sockets ----------------------------------------------------------------------


@pytest.mark.loopback
async def test_the_client_has_the_response_and_the_connection_before_the_task_ends() -> None:
    release, finished = trio.Event(), trio.Event()

    async def blocked() -> None:
        await release.wait()
        finished.set()

    async def handler(tasks: BackgroundTasks) -> Response:
        tasks.add(blocked)
        return Response.text("first")

    async def other() -> Response:
        return Response.text("second")

    router = Router().get("/", handler).get("/other", other)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/"))
            assert (await connection.read_response()).body == b"first"
            await connection.send(simple_get("/other"))  # the same keep-alive connection
            second = await connection.read_response()
            assert (second.body, second.closes) == (b"second", False)
            assert not finished.is_set()  # the task is still waiting
            release.set()
            await finished.wait()
            await connection.aclose()


@pytest.mark.loopback
async def test_a_disconnect_cancels_neither_added_nor_running_tasks() -> None:
    added, running, release = trio.Event(), trio.Event(), trio.Event()
    finished: list[str] = []
    both = trio.Event()

    async def job(name: str) -> None:
        if name == "running":
            running.set()
            await release.wait()
        finished.append(name)
        if len(finished) == 2:
            both.set()

    async def abandoned(tasks: BackgroundTasks) -> Response:
        tasks.add(job, "added")
        added.set()
        await trio.sleep_forever()  # cancelled when the client goes away
        raise AssertionError

    async def quick(tasks: BackgroundTasks) -> Response:
        tasks.add(job, "running")
        return Response.text("ok")

    router = Router().get("/abandoned", abandoned).get("/quick", quick)
    with trio.fail_after(10):
        async with serving(router) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(simple_get("/abandoned"))
            await added.wait()
            await connection.aclose()  # the handler is cancelled; its task still runs
            async with httpx.AsyncClient() as client:
                assert (await client.get(f"{served.url}/quick")).text == "ok"
            await running.wait()  # the client is gone by now
            release.set()
            await both.wait()
    assert sorted(finished) == ["added", "running"]


@pytest.mark.loopback
async def test_serve_waits_for_them_then_cancels_them_at_shutdown_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="trioframe")
    outcome: dict[str, str] = {}

    async def sleeper(name: str, seconds: float) -> None:
        try:
            await trio.sleep(seconds)
            outcome[name] = "finished"
        except trio.Cancelled:
            outcome[name] = "cancelled"
            raise

    async def handler(tasks: BackgroundTasks) -> Response:
        tasks.add(sleeper, "short", 0.2)
        tasks.add(sleeper, "long", 60)
        return Response.text("ok")

    with trio.fail_after(10):
        async with serving(Router().get("/", handler), ServerConfig(shutdown_timeout=1)) as served:
            async with httpx.AsyncClient() as client:
                assert (await client.get(served.url)).text == "ok"
            stopping = trio.current_time()
        took = trio.current_time() - stopping
    assert outcome == {"short": "finished", "long": "cancelled"}
    assert 0.9 <= took < 3
