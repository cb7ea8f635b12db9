"""``Response.file`` end to end through the in-memory ``TestClient`` (the chunked path)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from trioframe import Path as Path_
from trioframe import Response, Router
from trioframe._files import resolve as file_response_module
from trioframe.middleware import CompressionMiddleware
from trioframe.testing import TestClient

DATA = bytes(range(256)) * 400  # 102,400 bytes, more than one read chunk


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "data.bin").write_bytes(DATA)
    (tmp_path / "page.html").write_text("<p>" + "hello " * 200 + "</p>")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "folder").mkdir()
    return tmp_path


@pytest.fixture
async def client(files: Path) -> AsyncIterator[TestClient]:
    async def serve(name: Path_[str]) -> Response:
        return Response.file(files / name).with_header("cache-control", "max-age=60")

    async def download() -> Response:
        return Response.file(files / "data.bin", filename="données.bin", download=True)

    router = Router().get("/f/{name}", serve).post("/f/{name}", serve).get("/download", download)
    async with TestClient(router) as client:
        yield client


async def test_whole_file_with_validators(client: TestClient) -> None:
    response = await client.get("/f/data.bin")
    assert response.status_code == 200
    assert response.content == DATA
    assert response.headers["content-length"] == str(len(DATA))
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["cache-control"] == "max-age=60"  # set on it: kept
    assert re.fullmatch(r'"[0-9a-f]+-[0-9a-f]+"', response.headers["etag"])
    assert response.headers["last-modified"].endswith(" GMT")
    html = await client.get("/f/page.html")
    assert html.headers["content-type"] == "text/html; charset=utf-8"
    empty = await client.get("/f/empty.txt")
    assert (empty.status_code, empty.content, empty.headers["content-length"]) == (200, b"", "0")


async def test_head_sends_the_headers_only(client: TestClient) -> None:
    response = await client.head("/f/data.bin")
    assert response.status_code == 200
    assert response.headers["content-length"] == str(len(DATA)) and response.content == b""


@pytest.mark.parametrize(
    ("range_header", "first", "last"),
    [
        ("bytes=0-0", 0, 0),
        ("bytes=1000-1999", 1000, 1999),
        ("bytes=-100", 102300, 102399),
        ("bytes=102000-", 102000, 102399),
        ("bytes=0-9,5-20", 0, 20),
    ],
)
async def test_a_single_range(client: TestClient, range_header: str, first: int, last: int) -> None:
    response = await client.get("/f/data.bin", headers={"range": range_header})
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes {first}-{last}/{len(DATA)}"
    assert response.content == DATA[first : last + 1]
    assert response.headers["content-length"] == str(last - first + 1)


async def test_several_ranges_are_multipart_byteranges(client: TestClient) -> None:
    response = await client.get("/f/data.bin", headers={"range": "bytes=500-509,0-4,-3"})
    assert response.status_code == 206
    media_type, _, boundary = response.headers["content-type"].partition("; boundary=")
    assert media_type == "multipart/byteranges" and boundary
    assert int(response.headers["content-length"]) == len(response.content)
    body = response.content
    assert body.startswith(b"--" + boundary.encode() + b"\r\n")
    assert body.endswith(b"\r\n--" + boundary.encode() + b"--\r\n")
    parts = body.split(b"--" + boundary.encode())[1:-1]
    got = []
    for part in parts:
        head, _, data = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        assert fields[b"content-type"] == b"application/octet-stream"
        first, last = map(int, fields[b"content-range"].split(b" ")[1].split(b"/")[0].split(b"-"))
        assert data.removesuffix(b"\r\n") == DATA[first : last + 1]
        got.append((first, last))
    assert got == [(0, 4), (500, 509), (len(DATA) - 3, len(DATA) - 1)]  # sorted


@pytest.mark.parametrize(
    "range_header", ["bytes=5-4", "bytes=x", "lines=1-2", "bytes=" + ",".join(["0-0"] * 17)]
)
async def test_an_invalid_or_excessive_range_gets_the_whole_file(
    client: TestClient, range_header: str
) -> None:
    response = await client.get("/f/data.bin", headers={"range": range_header})
    assert response.status_code == 200 and response.content == DATA


async def test_an_unsatisfiable_range_is_416(client: TestClient) -> None:
    response = await client.get("/f/data.bin", headers={"range": f"bytes={len(DATA)}-"})
    assert response.status_code == 416
    assert response.headers["content-range"] == f"bytes */{len(DATA)}"
    assert response.json()["status"] == 416


async def test_range_is_for_get_only_and_if_range_must_match(client: TestClient) -> None:
    etag = (await client.get("/f/data.bin")).headers["etag"]
    head = await client.head("/f/data.bin", headers={"range": "bytes=0-9"})
    assert head.status_code == 200
    matching = await client.get("/f/data.bin", headers={"range": "bytes=0-9", "if-range": etag})
    assert matching.status_code == 206
    stale = await client.get("/f/data.bin", headers={"range": "bytes=0-9", "if-range": '"old"'})
    assert stale.status_code == 200 and stale.content == DATA


async def test_conditional_requests(client: TestClient) -> None:
    first = await client.get("/f/data.bin")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    not_modified = await client.get("/f/data.bin", headers={"if-none-match": etag})
    assert not_modified.status_code == 304 and not_modified.content == b""
    assert not_modified.headers["etag"] == etag
    assert not_modified.headers["cache-control"] == "max-age=60"
    assert (
        await client.get("/f/data.bin", headers={"if-modified-since": modified})
    ).status_code == 304
    # If-None-Match that does not match: no fall-through to If-Modified-Since
    other = await client.get(
        "/f/data.bin", headers={"if-none-match": '"x"', "if-modified-since": modified}
    )
    assert other.status_code == 200
    failed = await client.get("/f/data.bin", headers={"if-match": '"x"'})
    assert failed.status_code == 412 and failed.json()["status"] == 412
    assert (await client.post("/f/data.bin", headers={"if-none-match": "*"})).status_code == 412


async def test_content_disposition_for_a_download(client: TestClient) -> None:
    response = await client.get("/download")
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"donn_es.bin\"; filename*=UTF-8''donn%C3%A9es.bin"
    )


async def test_what_cannot_be_served(
    client: TestClient, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (await client.get("/f/missing.txt")).status_code == 404
    assert (await client.get("/f/folder")).status_code == 404
    os.mkfifo(files / "pipe")
    assert (await client.get("/f/pipe")).status_code == 404  # opened without blocking, refused

    def unreadable(path: str) -> tuple[int, os.stat_result]:
        raise PermissionError(13, "Permission denied", path)  # (tests may run as root)

    monkeypatch.setattr(file_response_module, "open_regular_file", unreadable)
    forbidden = await client.get("/f/data.bin")
    assert forbidden.status_code == 403 and forbidden.json()["status"] == 403


async def test_compression_leaves_ranges_and_compresses_a_whole_text_file(files: Path) -> None:
    async def page() -> Response:
        return Response.file(files / "page.html")

    router = Router().get("/page", page).middleware(CompressionMiddleware())
    async with TestClient(router) as client:
        ranged = await client.get(
            "/page", headers={"range": "bytes=0-9", "accept-encoding": "gzip"}
        )
        assert ranged.status_code == 206 and "content-encoding" not in ranged.headers
        assert ranged.content == (files / "page.html").read_bytes()[:10]
        whole = await client.get("/page", headers={"accept-encoding": "gzip"})
        assert whole.headers["content-encoding"] == "gzip"
        assert whole.content == (files / "page.html").read_bytes()  # httpx decodes it


async def test_a_file_response_a_middleware_makes_is_resolved_by_the_server(files: Path) -> None:
    async def never() -> Response:
        raise AssertionError("not reached")

    async def serve_file(request: object, next: object) -> Response:
        return Response.file(files / "data.bin")

    router = Router().get("/x", never).middleware(serve_file)
    async with TestClient(router) as client:
        response = await client.get("/x", headers={"range": "bytes=0-1"})
        assert response.status_code == 206 and response.content == DATA[:2]


async def test_over_http2_a_file_and_its_ranges_stream_with_flow_control(files: Path) -> None:
    big = DATA * 10  # past the initial HTTP/2 flow-control window (65,535 bytes)
    (files / "big.bin").write_bytes(big)

    async def serve() -> Response:
        return Response.file(files / "big.bin")

    async with TestClient(Router().get("/big", serve), http2=True) as client:
        whole = await client.get("/big")
        assert whole.http_version == "HTTP/2" and whole.content == big
        ranged = await client.get("/big", headers={"range": "bytes=1-2,70000-70009"})
        assert ranged.status_code == 206 and big[70000:70010] in ranged.content


async def test_a_download_without_a_filename_is_named_after_the_file(files: Path) -> None:
    async def plain_download() -> Response:
        return Response.file(files / "data.bin", download=True)

    async with TestClient(Router().get("/d", plain_download)) as client:
        response = await client.get("/d")
    assert response.headers["content-disposition"] == 'attachment; filename="data.bin"'


def _open_copies(path: Path) -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return count


async def test_answers_that_send_no_file_leave_no_descriptor_open(
    client: TestClient, files: Path
) -> None:
    etag = (await client.get("/f/data.bin")).headers["etag"]
    for headers, status in [
        ({"if-none-match": etag}, 304),
        ({"if-match": '"x"'}, 412),
        ({"range": f"bytes={len(DATA)}-"}, 416),
    ]:
        assert (await client.get("/f/data.bin", headers=headers)).status_code == status
        assert (await client.head("/f/data.bin")).status_code == 200
    assert _open_copies(files / "data.bin") == 0
