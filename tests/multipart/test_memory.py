"""Memory: a 100 MiB upload saved with ``save_to_file`` grows the server's peak RSS by less
than 20 MiB. The server (``memory_app.py``) runs in a subprocess; its ``VmHWM`` (peak
resident set) is read from ``/proc/<pid>/status`` before and after the upload. The client
streams the body over a loopback socket in 1 MiB pieces made on the fly, so neither side
ever holds the whole body."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import trio

from tests.loopback._support import RawConnection

from ._support import CONTENT_TYPE, MiB, Part, encode

pytestmark = [
    pytest.mark.loopback,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status"),
]

APP = pathlib.Path(__file__).with_name("memory_app.py")
REPO = pathlib.Path(__file__).resolve().parents[2]
UPLOAD_SIZE = 100 * MiB
PIECE = 1 * MiB
MAX_GROWTH = 20 * MiB


def peak_rss(pid: int) -> int:
    """The process's peak resident set size (``VmHWM``) in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                value, unit = line.split()[1:3]
                assert unit == "kB"
                return int(value) * 1024
    raise AssertionError("no VmHWM line")


async def upload_file(port: int, size: int, piece: int = PIECE) -> bytes:
    """POST one file field of ``size`` bytes, sent in ``piece``-sized writes of a reused
    buffer; returns the response body."""
    before, after = encode([Part("file", filename="big.bin")]).split(b"\r\n\r\n\r\n", 1)
    before += b"\r\n\r\n"  # the part head ends here; the content goes in between
    after = b"\r\n" + after
    head = (
        "POST /upload HTTP/1.1\r\nHost: test\r\n"
        f"Content-Type: {CONTENT_TYPE}\r\nContent-Length: {len(before) + size + len(after)}\r\n\r\n"
    ).encode()
    block = b"m" * piece
    connection = await RawConnection.open("127.0.0.1", port)
    try:
        await connection.send(head + before)
        left = size
        while left:
            count = min(piece, left)
            await connection.send(block if count == piece else block[:count])
            left -= count
        await connection.send(after)
        response = await connection.read_response()
    finally:
        await connection.aclose()
    assert response.status == 200, (response.status, response.body)
    return response.body


class ServerProcess:
    """``memory_app.py`` in a subprocess: its pid and the port it printed."""

    def __init__(self, process: trio.Process, port: int) -> None:
        self.process = process
        self.port = port


async def start_server(directory: pathlib.Path) -> ServerProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    process = await trio.lowlevel.open_process(
        [sys.executable, str(APP), str(directory)], env=env, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    output = b""
    while b"\n" not in output:
        data = await process.stdout.receive_some(1024)
        if not data:
            raise AssertionError(f"memory_app.py exited before listening: {output!r}")
        output += data
    word, port = output.split(b"\n", 1)[0].split()
    assert word == b"PORT", output
    return ServerProcess(process, int(port))


async def test_100_mib_upload_grows_peak_rss_by_less_than_20_mib(tmp_path: pathlib.Path) -> None:
    with trio.fail_after(60):
        server = await start_server(tmp_path)
        try:
            # Warm up: threads, python-multipart and the file code paths are loaded once.
            await upload_file(server.port, 3 * MiB, 256 * 1024)
            before = peak_rss(server.process.pid)
            body = await upload_file(server.port, UPLOAD_SIZE)
            after = peak_rss(server.process.pid)
        finally:
            server.process.kill()
            await server.process.wait()
    assert body == b'{"files":[["file",104857600]]}'
    growth = after - before
    print(f"peak RSS {before / MiB:.1f} MiB -> {after / MiB:.1f} MiB: +{growth / MiB:.2f} MiB")
    assert growth < MAX_GROWTH, f"peak RSS grew by {growth / MiB:.1f} MiB"
    assert (tmp_path / "1-file").stat().st_size == UPLOAD_SIZE
