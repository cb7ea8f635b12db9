"""Cancellation while a handler reads a multipart body, over in-memory connections with a
mock clock (no real waiting): ``body_timeout`` and the handler's own cancel scopes, and what
``save_to_file`` leaves on disk."""

from __future__ import annotations

import json
import pathlib

import trio
import trio.testing

from tests.rawhttp import connect, raw_server, status_of
from trioframe import Multipart, Response, Router, ServerConfig

from ._support import CONTENT_TYPE, Part, encode, tree, wait_until

PART_START = encode([Part("file", filename="f.bin")], close=False)[: -len(b"\r\n")]


def _head(length: int) -> bytes:
    return (
        f"POST /u HTTP/1.1\r\nHost: t\r\nContent-Type: {CONTENT_TYPE}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _body_of(raw: bytes) -> dict[str, object]:
    doc = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert isinstance(doc, dict)
    return doc


async def test_body_timeout_in_save_to_file_is_408_and_removes_the_file(
    autojump_clock: trio.testing.MockClock, tmp_path: pathlib.Path
) -> None:
    target = tmp_path / "stalled.bin"
    outcome: list[str] = []

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        try:
            await field.save_to_file(target)
        except trio.Cancelled:
            outcome.append(f"cancelled at {trio.current_time():g}")
            raise
        return Response.text("unreachable")

    config = ServerConfig(body_timeout=5)
    async with raw_server(Router().post("/u", upload), config) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(_head(100_000) + PART_START + b"x" * 1000)  # then stalls
        raw = await connection.read_until_closed()
    assert status_of(raw) == 408
    assert _body_of(raw)["message"] == "request body timed out"
    assert outcome == ["cancelled at 5"]
    assert not target.exists()
    assert tree(tmp_path) == []


async def test_own_timeout_around_save_to_file_removes_the_file(
    mock_clock: trio.testing.MockClock, tmp_path: pathlib.Path
) -> None:
    """The handler's own ``move_on_after`` cancels ``save_to_file`` while the client is
    slow: the partial file is removed, and the handler goes on to answer. The clock moves
    only when the test jumps it, once the first bytes are on disk."""
    target = tmp_path / "slow.bin"
    report: list[bool] = []

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        with trio.move_on_after(1) as scope:
            await field.save_to_file(target)
        report.append(target.exists())
        return Response.json({"timed_out": scope.cancelled_caught})

    async with raw_server(Router().post("/u", upload)) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(_head(100_000) + PART_START + b"x" * 1000)
        await wait_until(lambda: target.exists() and target.stat().st_size == 1000)
        mock_clock.jump(1)
        raw = await connection.read_until_closed()
    assert status_of(raw) == 200, raw
    assert _body_of(raw) == {"timed_out": True}
    assert report == [False]
    assert tree(tmp_path) == []


async def test_own_timeout_around_a_read_does_not_leave_the_body_timeout_armed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A handler that stops waiting for the body (its own ``move_on_after`` around
    ``next_field()``) and then works longer than ``body_timeout`` must not be cancelled and
    answered 408 "request body timed out": it is no longer waiting for the body."""
    log: list[str] = []

    async def upload(form: Multipart) -> Response:
        with trio.move_on_after(1):
            await form.next_field()
        log.append(f"gave up at {trio.current_time():g}")
        await trio.sleep(10)  # other work, longer than body_timeout
        log.append(f"done at {trio.current_time():g}")
        return Response.text("answered without the body")

    config = ServerConfig(body_timeout=5)
    async with raw_server(Router().post("/u", upload), config) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(_head(1000) + b"--")  # the body stalls
        raw = await connection.read_until_closed()
    assert log == ["gave up at 1", "done at 11"], (log, raw)
    assert status_of(raw) == 200
