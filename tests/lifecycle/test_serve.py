"""Lifespans under ``Server.serve()`` and ``Server.run()`` on loopback: entered before
``nursery.start(server.serve)`` returns, exited after the connections have drained and the
app nursery's tasks have finished; a failure while entering is raised as it is by ``serve()``
and is one log line and status 3 under ``run()``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import trio

from trioframe import ConfigurationError, Response, Router, Server, Shutdown, State

pytestmark = pytest.mark.loopback


class Db:
    pass


class Cache:
    pass


async def test_serve_enters_before_start_returns_and_exits_after_the_drain() -> None:
    log: list[str] = []
    polling = trio.Event()

    async def background() -> None:
        try:
            await trio.sleep_forever()
        finally:
            log.append("task cancelled")

    @asynccontextmanager
    async def lifespan(nursery: trio.Nursery) -> AsyncIterator[Db]:
        log.append("enter")
        nursery.start_soon(background)
        yield Db()
        log.append("exit")

    async def poll(db: State[Db], shutdown: Shutdown) -> Response:
        polling.set()
        await shutdown.wait()
        log.append("poll answered")
        return Response.json({"db": isinstance(db, Db)})

    server = Server(Router().lifespan(lifespan).get("/poll", poll), "127.0.0.1:0")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            assert log == ["enter"]
            async with httpx.AsyncClient() as client, trio.open_nursery() as requests:
                responses: list[httpx.Response] = []

                async def fetch() -> None:
                    responses.append(await client.get(f"http://{host}:{port}/poll"))

                requests.start_soon(fetch)
                await polling.wait()
                server.shutdown()
    assert responses[0].json() == {"db": True}
    assert log == ["enter", "poll answered", "task cancelled", "exit"]


async def test_serve_raises_what_a_lifespan_raised_while_entering() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        raise OSError("cannot reach the database")
        yield

    server = Server(Router().lifespan(lifespan), "127.0.0.1:0")
    with trio.fail_after(10), pytest.raises(OSError, match="cannot reach the database"):
        await server.serve()  # the exception itself, not an exception group


def test_run_logs_one_line_and_exits_3_when_a_lifespan_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @asynccontextmanager
    async def connect_db() -> AsyncIterator[None]:
        raise RuntimeError("database unreachable")
        yield

    server = Server(Router().lifespan(connect_db), "127.0.0.1:0")
    with caplog.at_level(logging.INFO, logger="trioframe"), pytest.raises(SystemExit) as info:
        server.run()
    assert info.value.code == 3
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1
    assert errors[0].exc_info is None
    message = errors[0].getMessage()
    assert "connect_db" in message and "RuntimeError: database unreachable" in message


async def test_a_failing_background_task_stops_the_server_and_serve_raises_it() -> None:
    log: list[str] = []

    async def failing() -> None:
        raise ValueError("the cache refresh broke")

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        try:
            yield
        finally:
            log.append("exit")

    @asynccontextmanager
    async def starts_failing_task(nursery: trio.Nursery) -> AsyncIterator[None]:
        nursery.start_soon(failing)
        yield

    server = Server(Router().lifespan(lifespan).lifespan(starts_failing_task), "127.0.0.1:0")
    with trio.fail_after(10), pytest.raises(ValueError, match="broke"):
        await server.serve()  # after a graceful shutdown: the exception itself, not a group
    assert log == ["exit"]


# -- lifespans without a return annotation -----------------------------------------------------
async def is_db(db: State[Db]) -> Response:
    return Response.json(isinstance(db, Db))


async def test_serve_registers_what_an_unannotated_lifespan_yields() -> None:
    @asynccontextmanager
    async def open_db():  # type: ignore[no-untyped-def]
        yield Db()

    server = Server(Router().lifespan(open_db).get("/", is_db), "127.0.0.1:0")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            async with httpx.AsyncClient() as client:
                assert (await client.get(f"http://{host}:{port}/")).json() is True
            server.shutdown()


def unannotated_cache(log: list[str]):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def open_cache():  # type: ignore[no-untyped-def]
        log.append("enter")
        try:
            yield Cache()
        finally:
            log.append("exit")

    return open_cache


async def test_serve_refuses_a_state_no_lifespan_yielded_before_accepting() -> None:
    """After entering, before reporting its addresses (so before accepting anything):
    ``ConfigurationError`` as it is, and the lifespan exited."""
    log: list[str] = []
    server = Server(Router().lifespan(unannotated_cache(log)).get("/", is_db), "127.0.0.1:0")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            with pytest.raises(ConfigurationError, match="no state of type Db") as info:
                await nursery.start(server.serve)  # started() never came
    assert "open_cache yielded a Cache" in str(info.value)
    assert log == ["enter", "exit"]


def test_run_logs_the_configuration_error_of_a_state_no_lifespan_yielded_and_exits_3(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    server = Server(Router().lifespan(unannotated_cache(log)).get("/", is_db), "127.0.0.1:0")
    with caplog.at_level(logging.INFO, logger="trioframe"), pytest.raises(SystemExit) as info:
        server.run()
    assert info.value.code == 3
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and errors[0].exc_info is None
    assert "no state of type Db" in errors[0].getMessage()
    assert log == ["enter", "exit"]
