"""A client that goes away mid-upload, over a real loopback socket: the handler is cancelled
inside ``save_to_file`` and the partly written file is removed."""

from __future__ import annotations

import pathlib

import pytest
import trio
import trio.testing

from trioframe import Multipart, Response, Router, Server

from ._support import CONTENT_TYPE, KiB, Part, encode, tree, wait_until

pytestmark = pytest.mark.loopback

FIRST_BYTES = 200 * KiB  # sent before the client disconnects
DECLARED = 5 * 1024 * KiB  # the Content-Length the client promises


class Upload:
    def __init__(self) -> None:
        self.saving = trio.Event()
        self.finished = trio.Event()
        self.outcome = "running"


def _router(target: pathlib.Path, upload: Upload) -> Router:
    async def save(form: Multipart) -> Response:
        try:
            field = await form.next_field()
            assert field is not None
            upload.saving.set()
            await field.save_to_file(target)
            upload.outcome = "completed"
        except trio.Cancelled:
            upload.outcome = "cancelled"
            raise
        except BaseException as exc:
            upload.outcome = f"failed: {exc!r}"
            raise
        finally:
            upload.finished.set()
        return Response.text("saved")

    return Router().post("/upload", save)


def _head(length: int) -> bytes:
    return (
        f"POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: {CONTENT_TYPE}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


async def test_disconnect_mid_upload_cancels_the_handler_and_removes_the_file(
    tmp_path: pathlib.Path,
) -> None:
    target = tmp_path / "partial.bin"
    upload = Upload()
    server = Server(_router(target, upload), "127.0.0.1:0")
    part_start = encode([Part("file", filename="big.bin")], close=False)
    part_start = part_start[: -len(b"\r\n")]  # up to where the content begins
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            (host, port), *_ = await nursery.start(server.serve)
            stream = await trio.open_tcp_stream(host, port)
            await stream.send_all(_head(DECLARED) + part_start + b"x" * FIRST_BYTES)
            await upload.saving.wait()
            # The server has the first bytes; once they are on disk it waits for more.
            await wait_until(lambda: target.exists() and target.stat().st_size == FIRST_BYTES)
            assert upload.outcome == "running"

            await stream.aclose()  # the client goes away mid-file
            await upload.finished.wait()
            server.shutdown()
    assert not target.exists()
    assert tree(tmp_path) == []
    assert upload.outcome == "cancelled"


async def test_disconnect_while_reading_a_field_cancels_the_handler() -> None:
    reading = trio.Event()
    finished = trio.Event()
    outcome: list[str] = []

    async def read(form: Multipart) -> Response:
        try:
            field = await form.next_field()
            assert field is not None
            reading.set()
            await field.bytes()
            outcome.append("completed")
        except trio.Cancelled:
            outcome.append("cancelled")
            raise
        except BaseException as exc:
            outcome.append(f"failed: {exc!r}")
            raise
        finally:
            finished.set()
        return Response.text("read")

    server = Server(Router().post("/upload", read), "127.0.0.1:0")
    part_start = encode([Part("text")], close=False)[: -len(b"\r\n")]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            (host, port), *_ = await nursery.start(server.serve)
            stream = await trio.open_tcp_stream(host, port)
            await stream.send_all(_head(DECLARED) + part_start + b"t" * 1000)
            await reading.wait()
            await trio.testing.wait_all_tasks_blocked()
            await stream.aclose()
            await finished.wait()
            server.shutdown()
    assert outcome == ["cancelled"]
