"""CompressionMiddleware: negotiation, eligibility, sizes, HEAD, streaming."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator
from urllib.parse import urlencode

import httpx
import pytest
import trio
import trio.testing

from trioframe import ConfigurationError, Path, Request, Response, Router
from trioframe.middleware import CompressionMiddleware
from trioframe.middleware.compression import GzipStream, accepts_gzip
from trioframe.testing import TestClient

N = 100
TEXT = "abcdefghij" * 50  # 500 bytes, compresses well


async def sized(size: Path[int]) -> Response:
    return Response.text("x" * size)


async def typed(request: Request) -> Response:
    kind = request.query("type") or ""
    return Response(200, TEXT.encode(), [(b"content-type", kind.encode())])


def app(**kwargs: int) -> Router:

    async def encoded() -> Response:
        return Response.text(TEXT).with_header("content-encoding", "br")

    async def tagged() -> Response:
        return (
            Response.text(TEXT)
            .with_header("etag", '"v1"')
            .with_header("vary", "Origin")
            .with_header("content-length", "500")
        )

    async def no_transform() -> Response:
        return Response.text(TEXT).with_header("cache-control", "public, no-transform")

    async def empty() -> Response:
        return Response(204)

    return (
        Router()
        .middleware(CompressionMiddleware(minimum_size=N, **kwargs))
        .get("/size/{size}", sized)
        .get("/type", typed)
        .get("/encoded", encoded)
        .get("/tagged", tagged)
        .get("/no-transform", no_transform)
        .get("/empty", empty)
    )


async def raw_get(
    client: httpx.AsyncClient, path: str, accept: str | None = "gzip", method: str = "GET"
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx would otherwise decode gzip itself)."""
    headers = {} if accept is None else {"accept-encoding": accept}
    async with client.stream(method, path, headers=headers) as response:
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    return response, raw


@pytest.mark.parametrize(("size", "compressed"), [(N - 1, False), (N, True), (N + 1, True)])
async def test_minimum_size_boundary(size: int, compressed: bool) -> None:
    async with TestClient(app()) as client:
        response, raw = await raw_get(client, f"/size/{size}")
    assert response.headers.get("content-encoding") == ("gzip" if compressed else None)
    assert int(response.headers["content-length"]) == len(raw)
    body = gzip.decompress(raw) if compressed else raw
    assert body == b"x" * size
    assert response.headers.get("vary") == ("Accept-Encoding" if compressed else None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"gzip", True),
        (b"GZIP", True),
        (b"deflate, gzip;q=0.5", True),
        (b"gzip;q=0", False),
        (b"gzip; q=0.000", False),
        (b"gzip;q=0.001", True),
        (b"*", True),
        (b"*;q=0", False),
        (b"*, gzip;q=0", False),
        (b"gzip;q=0, *", False),
        (b"*;q=0, gzip", True),
        (b"identity", False),
        (b"br, deflate", False),
        (b"", False),
        (b"gzip;q=abc", False),
        (b"gzip;q=2", False),
    ],
)
def test_accept_encoding_parsing(value: bytes, expected: bool) -> None:
    assert accepts_gzip(value) is expected


@pytest.mark.parametrize(
    ("accept", "compressed"),
    [("gzip, deflate", True), ("gzip;q=0", False), ("*", True), ("identity", False), (None, False)],
)
async def test_negotiation_through_the_server(accept: str | None, compressed: bool) -> None:
    async with TestClient(app()) as client:
        if accept is None:
            del client.headers["accept-encoding"]
        response, raw = await raw_get(client, "/size/500", accept)
    assert ("content-encoding" in response.headers) is compressed
    assert response.headers["vary"] == "Accept-Encoding"  # eligible either way
    assert (gzip.decompress(raw) if compressed else raw) == b"x" * 500


@pytest.mark.parametrize(
    ("content_type", "compressed"),
    [
        ("text/html; charset=utf-8", True),
        ("text/css", True),
        ("application/json", True),
        ("application/javascript", True),
        ("application/xml", True),
        ("image/svg+xml", True),
        ("application/problem+json", True),
        ("application/atom+xml", True),
        ("Application/JSON", True),
        ("image/png", False),
        ("application/octet-stream", False),
        ("application/zip", False),
    ],
)
async def test_only_compressible_types(content_type: str, compressed: bool) -> None:
    async with TestClient(app()) as client:
        response, raw = await raw_get(client, "/type?" + urlencode({"type": content_type}))
    assert ("content-encoding" in response.headers) is compressed
    assert (gzip.decompress(raw) if compressed else raw) == TEXT.encode()


async def test_existing_encoding_no_transform_and_no_body_statuses_are_left_alone() -> None:
    async with TestClient(app()) as client:
        encoded, _ = await raw_get(client, "/encoded")
        kept, raw = await raw_get(client, "/no-transform")
        empty, _ = await raw_get(client, "/empty")
    assert encoded.headers.get_list("content-encoding") == ["br"]
    assert "content-encoding" not in kept.headers and raw == TEXT.encode()
    assert empty.status_code == 204 and "vary" not in empty.headers


async def test_headers_are_fixed_up_when_compressing() -> None:
    async with TestClient(app()) as client:
        response, raw = await raw_get(client, "/tagged")
    assert response.headers.get_list("vary") == ["Origin", "Accept-Encoding"]
    assert response.headers["etag"] == 'W/"v1"'
    assert response.headers.get_list("content-length") == [str(len(raw))]
    assert gzip.decompress(raw) == TEXT.encode()


async def test_head_has_the_same_headers_as_get() -> None:
    async with TestClient(app()) as client:
        get, raw = await raw_get(client, "/size/500")
        head, nothing = await raw_get(client, "/size/500", method="HEAD")
    assert nothing == b""
    for name in ("content-encoding", "content-length", "vary", "content-type"):
        assert head.headers[name] == get.headers[name], name
    assert int(head.headers["content-length"]) == len(raw)


async def test_a_stream_is_compressed_chunk_by_chunk(
    autojump_clock: trio.testing.MockClock,
) -> None:
    proceed = trio.Event()
    closed: list[str] = []

    async def events() -> AsyncIterator[str]:
        try:
            yield "first event"
            await proceed.wait()
            yield "second event"
        finally:
            closed.append("closed")

    async def sse() -> Response:
        return Response.sse(events())

    router = Router().middleware(CompressionMiddleware()).get("/events", sse)
    async with TestClient(router) as client:
        decoder = zlib.decompressobj(wbits=31)
        text = b""
        async with client.stream("GET", "/events", headers={"accept-encoding": "gzip"}) as r:
            assert r.headers["content-encoding"] == "gzip" and "content-length" not in r.headers
            chunks = r.aiter_raw()
            with trio.fail_after(5):  # without a sync flush the first event would not arrive
                while b"first event" not in text:
                    text += decoder.decompress(await anext(chunks))
            proceed.set()
            async for chunk in chunks:
                text += decoder.decompress(chunk)
        assert decoder.eof and text == b"data: first event\n\ndata: second event\n\n"
    assert closed == ["closed"]


async def test_closing_an_unstarted_gzip_stream_closes_its_source() -> None:
    closed: list[str] = []

    class Source:
        def __aiter__(self) -> Source:
            return self

        async def __anext__(self) -> bytes:
            raise StopAsyncIteration

        async def aclose(self) -> None:
            closed.append("closed")

    stream = GzipStream(Source())
    await stream.aclose()
    assert closed == ["closed"]
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


@pytest.mark.parametrize("status", [204, 206, 304])
async def test_statuses_without_a_full_body_are_not_compressed(status: int) -> None:
    async def answer() -> Response:
        return Response(status, b"", [(b"content-type", b"text/html")])

    router = Router().middleware(CompressionMiddleware(minimum_size=0)).get("/", answer)
    async with TestClient(router) as client:
        response, _ = await raw_get(client, "/")
    assert response.status_code == status
    assert "content-encoding" not in response.headers and "vary" not in response.headers


@pytest.mark.parametrize("kwargs", [{"minimum_size": -1}, {"level": 0}, {"level": 10}])
def test_invalid_settings_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError):
        CompressionMiddleware(**kwargs)
