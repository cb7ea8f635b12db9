"""Request and response bodies are the same over HTTP/2 as over HTTP/1.1 (in-memory
``TestClient``, each test over both): streaming and server-sent events arrive piece by piece
while the handler still runs, multipart uploads, ``max_body_size`` at N-1, N and N+1, HEAD,
204 and 304, repeated Set-Cookie, responses of several MB."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator

import httpx
import pytest
import trio

from tests.app.helpers import assert_error_body
from trioframe import (
    Body,
    Cookie,
    Multipart,
    Request,
    Response,
    Router,
    ServerConfig,
    ServerSentEvent,
)
from trioframe.testing import TestClient


@pytest.fixture(params=[False, True], ids=["http1.1", "http2"])
def http2(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


def expected_version(http2: bool) -> str:
    return "HTTP/2" if http2 else "HTTP/1.1"


# -- streaming and SSE: each piece is on the wire before the handler's next one ----------------
class Gate:
    """Holds a streaming handler between its pieces until the test lets it go on."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.finished = trio.Event()


async def _held_pieces(gate: Gate) -> AsyncIterator[bytes]:
    try:
        yield b"first piece"
        await gate.release.wait()
        yield b"second piece"
        yield b"third piece"
    finally:
        gate.finished.set()


async def _read_first_then_release(response: httpx.Response, gate: Gate) -> list[bytes]:
    """Read the stream: the first piece must come while the handler is held."""
    pieces = response.aiter_raw()
    first = await anext(pieces)
    assert not gate.finished.is_set()  # the handler has not ended: the piece came on its own
    gate.release.set()
    return [first, *[piece async for piece in pieces]]


async def test_a_streamed_response_arrives_piece_by_piece(http2: bool) -> None:
    gate = Gate()

    async def streamed() -> Response:
        return Response.stream(_held_pieces(gate), content_type="text/plain")

    async with TestClient(Router().get("/", streamed), http2=http2) as client:
        with trio.fail_after(5):
            async with client.stream("GET", "/") as response:
                pieces = await _read_first_then_release(response, gate)
    assert response.http_version == expected_version(http2)
    assert "content-length" not in response.headers
    assert pieces[0] == b"first piece"
    assert b"".join(pieces) == b"first piecesecond piecethird piece"
    assert gate.finished.is_set()


async def test_server_sent_events_arrive_event_by_event(http2: bool) -> None:
    gate = Gate()

    async def events() -> AsyncIterator[str | ServerSentEvent]:
        try:
            yield "hello"
            await gate.release.wait()
            yield ServerSentEvent(data="line 1\nline 2", event="update", id="7")
        finally:
            gate.finished.set()

    async def sse() -> Response:
        return Response.sse(events())

    async with TestClient(Router().get("/events", sse), http2=http2) as client:
        with trio.fail_after(5):
            async with client.stream("GET", "/events") as response:
                pieces = await _read_first_then_release(response, gate)
    assert response.http_version == expected_version(http2)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert pieces[0] == b"data: hello\n\n"
    assert b"".join(pieces[1:]) == b"event: update\nid: 7\ndata: line 1\ndata: line 2\n\n"


# -- multipart ------------------------------------------------------------------------------
async def test_a_multipart_upload(http2: bool) -> None:
    async def upload(form: Multipart) -> Response:
        seen = []
        async for field in form:
            content = await field.bytes()
            seen.append(
                {
                    "name": field.name,
                    "file": field.file_name,
                    "type": field.content_type,
                    "size": len(content),
                    "sha": hashlib.sha256(content).hexdigest(),
                }
            )
        return Response.json(seen)

    data = os.urandom(300_000)  # several stream windows
    async with TestClient(Router().post("/upload", upload), http2=http2) as client:
        response = await client.post(
            "/upload",
            data={"title": "holiday"},
            files={"photo": ("beach.jpg", data, "image/jpeg")},
        )
    assert response.http_version == expected_version(http2)
    assert response.json() == [
        {"name": "title", "file": None, "type": None, "size": 7,
         "sha": hashlib.sha256(b"holiday").hexdigest()},
        {"name": "photo", "file": "beach.jpg", "type": "image/jpeg", "size": len(data),
         "sha": hashlib.sha256(data).hexdigest()},
    ]  # fmt: skip


# -- max_body_size ----------------------------------------------------------------------------
LIMIT = 1000


async def _size(body: Body) -> Response:
    return Response.json({"size": len(body)})


async def _chunks(size: int) -> AsyncIterator[bytes]:
    for start in range(0, size, 300):
        yield b"b" * min(300, size - start)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "no length"])
async def test_max_body_size_at_n_minus_1_n_and_n_plus_1(http2: bool, declared: bool) -> None:
    """Declared: the 413 comes from Content-Length before the body is read; not declared
    (HTTP/2 DATA frames without a length, chunked on HTTP/1.1): from the running total."""
    config = ServerConfig(max_body_size=LIMIT)
    async with TestClient(Router().post("/", _size), config, http2=http2) as client:
        answers = {}
        for size in (LIMIT - 1, LIMIT, LIMIT + 1):
            content = b"b" * size if declared else _chunks(size)
            answers[size] = await client.post("/", content=content)
        after = await client.post("/", content=b"ok")  # the client (connection) goes on
    assert answers[LIMIT - 1].json() == {"size": LIMIT - 1}
    assert answers[LIMIT].json() == {"size": LIMIT}
    assert_error_body(answers[LIMIT + 1], 413)
    assert after.json() == {"size": 2}
    assert {r.http_version for r in (*answers.values(), after)} == {expected_version(http2)}


# -- bodiless responses ---------------------------------------------------------------------
async def test_head_has_content_length_and_no_body(http2: bool) -> None:
    async def page() -> Response:
        return Response.text("x" * 1234)

    async with TestClient(Router().get("/", page), http2=http2) as client:
        response = await client.head("/")
    assert response.http_version == expected_version(http2)
    assert response.status_code == 200
    assert response.headers["content-length"] == "1234"
    assert response.content == b""


@pytest.mark.parametrize("status", [204, 304])
async def test_204_and_304_have_no_body(http2: bool, status: int) -> None:
    async def empty() -> Response:
        return Response(status).with_header("etag", '"v1"')

    async with TestClient(Router().get("/", empty), http2=http2) as client:
        response = await client.get("/")
    assert response.http_version == expected_version(http2)
    assert response.status_code == status
    assert response.content == b""
    assert "content-length" not in response.headers
    assert response.headers["etag"] == '"v1"'


async def test_set_cookie_headers_are_repeated_not_joined(http2: bool) -> None:
    async def login() -> Response:
        return (
            Response.text("in")
            .add_cookie(Cookie("session", "abc").http_only())
            .add_cookie(Cookie("theme", "dark"))
            .add_cookie(Cookie("lang", "fr").path("/docs"))
        )

    async with TestClient(Router().get("/", login), http2=http2) as client:
        response = await client.get("/")
        jar = dict(client.cookies.items())
    assert response.http_version == expected_version(http2)
    assert response.headers.get_list("set-cookie") == [
        "session=abc; HttpOnly",
        "theme=dark",
        "lang=fr; Path=/docs",
    ]
    assert jar == {"session": "abc", "theme": "dark", "lang": "fr"}


# -- large responses --------------------------------------------------------------------------
BIG = os.urandom(5 * 1024 * 1024 + 17)


async def test_a_response_of_several_megabytes_is_intact(http2: bool) -> None:
    async def big(request: Request) -> Response:
        return Response(200, BIG, [(b"content-type", b"application/octet-stream")])

    async def big_stream() -> Response:
        async def pieces() -> AsyncIterator[bytes]:
            for start in range(0, len(BIG), 100_000):
                yield BIG[start : start + 100_000]

        return Response.stream(pieces())

    router = Router().get("/big", big).get("/stream", big_stream)
    async with TestClient(router, http2=http2) as client:
        whole = await client.get("/big")
        streamed = await client.get("/stream")
    assert whole.http_version == expected_version(http2)
    assert whole.headers["content-length"] == str(len(BIG))
    assert whole.content == BIG
    assert streamed.content == BIG
