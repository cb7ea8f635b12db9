"""``Response.file`` over real loopback sockets: ``os.sendfile`` on plain HTTP/1.1, the
chunked path on TLS, a client that leaves mid-file, and memory for a 1 GiB download."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from trioframe import Path as Path_
from trioframe import Response, Router, ServerConfig
from trioframe._files.body import FileBody

from ..loopback._support import RawConnection, serving
from ..tls._support import make_certificates

DATA = os.urandom(3 * 1024 * 1024 + 17)  # several sendfile calls' worth on a slow client


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "data.bin").write_bytes(DATA)
    with open(tmp_path / "huge.bin", "wb") as huge:  # sparse: 1 GiB of zeros, no disk used
        huge.truncate(1024 * 1024 * 1024)
    return tmp_path


def file_router(files: Path) -> Router:
    async def serve(name: Path_[str]) -> Response:
        return Response.file(files / name)

    async def hello() -> str:
        return "hello"

    return Router().get("/f/{name}", serve).get("/", hello)


def counting_sendfile(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch ``os.sendfile`` to record each call's byte count."""
    calls: list[int] = []
    original: Callable[..., int] = os.sendfile

    def sendfile(*args: Any) -> int:
        sent = original(*args)
        calls.append(sent)
        return sent

    monkeypatch.setattr(os, "sendfile", sendfile)
    return calls


async def test_plain_http1_sends_the_file_with_sendfile(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = counting_sendfile(monkeypatch)
    async with serving(file_router(files)) as served, httpx.AsyncClient() as client:
        response = await client.get(served.url + "/f/data.bin")
        assert response.status_code == 200 and response.content == DATA
        assert sum(calls) == len(DATA)  # every byte of the file went through sendfile
        calls.clear()
        ranged = await client.get(
            served.url + "/f/data.bin", headers={"range": "bytes=10-19,100-109"}
        )
        assert ranged.status_code == 206 and sum(calls) == 20
        again = await client.get(served.url + "/")  # the connection is still in step
        assert again.text == "hello"


async def test_curl_resumes_a_download(files: Path, tmp_path: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (.ci/run installs it)")
    partial = tmp_path / "partial.bin"
    partial.write_bytes(DATA[:1000])
    async with serving(file_router(files)) as served:
        result = await trio.run_process(
            ["curl", "-sS", "-C", "-", "-o", str(partial), served.url + "/f/data.bin"],
            capture_stdout=True,
            check=False,
        )
    assert result.returncode == 0
    assert partial.read_bytes() == DATA


def _open_copies(path: Path) -> int:
    """How many of this process's descriptors have ``path`` open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return count


async def test_a_client_that_leaves_mid_file_frees_it_at_once(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = files / "huge.bin"
    closed = trio.Event()
    close = FileBody.close

    def close_and_tell(body: FileBody) -> None:
        # Only this test's body counts: a body left by an earlier test may be collected
        # (and closed) by the garbage collector at any moment.
        ours = not body._closed and os.readlink(f"/proc/self/fd/{body.fd}") == str(huge)
        close(body)
        if ours:
            closed.set()

    monkeypatch.setattr(FileBody, "close", close_and_tell)
    async with serving(file_router(files)) as served:
        connection = await RawConnection.open(served.host, served.port)
        await connection.send(b"GET /f/huge.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        with trio.fail_after(5):
            await connection.receive_some()  # the head and the first bytes
        assert _open_copies(huge) == 1  # being sent
        await connection.aclose()
        with trio.fail_after(5):  # the server notices the reset and closes the file
            await closed.wait()
        assert _open_copies(huge) == 0
        async with httpx.AsyncClient() as client:
            assert (await client.get(served.url + "/")).text == "hello"


async def test_tls_streams_the_file_in_chunks(
    files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = counting_sendfile(monkeypatch)
    certificates = make_certificates(tmp_path)
    config = ServerConfig().with_tls(certificates.server_file, certificates.server_file)
    async with serving(file_router(files), config) as served:
        ssl_context = certificates.client_context()
        async with httpx.AsyncClient(verify=ssl_context) as client:
            response = await client.get(f"https://{served.host}:{served.port}/f/data.bin")
    assert response.status_code == 200 and response.content == DATA
    assert calls == []  # TLS: no sendfile


def _rss_peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_a_1_gib_download_keeps_memory_flat(files: Path) -> None:
    async with serving(file_router(files)) as served, httpx.AsyncClient() as client:
        peak_before = _rss_peak_kib()
        received = 0
        async with client.stream("GET", served.url + "/f/huge.bin") as response:
            async for chunk in response.aiter_raw():
                received += len(chunk)
        assert received == 1024 * 1024 * 1024
    # Client and server share this process: both together may not grow by more than 64 MiB.
    assert _rss_peak_kib() - peak_before < 64 * 1024
