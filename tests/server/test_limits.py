"""Size and count limits of ``ServerConfig``, each at N-1, N and N+1, over in-memory
connections driven with raw bytes."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

import pytest

from tests.rawhttp import connect, raw_server, status_of
from trioframe import Json, Request, Response, Router, ServerConfig

calls: list[int] = []


async def echo(request: Request) -> Response:
    calls.append(len(request.body))
    return Response.text(f"got {len(request.body)}")


async def hello() -> Response:
    return Response.text("hi")


ROUTER = Router().post("/echo", echo).get("/", hello)


def error_of(raw: bytes) -> dict[str, object]:
    body: dict[str, object] = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    return body


@pytest.mark.parametrize(("size", "expected"), [(99, 200), (100, 200), (101, 413)])
async def test_max_body_size_from_content_length(size: int, expected: int) -> None:
    calls.clear()
    async with raw_server(ROUTER, ServerConfig(max_body_size=100)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size
        )
        head = await conn.response()
        assert head.status_code == expected
        assert calls == ([size] if expected == 200 else [])
        if expected == 413:
            assert json.loads(conn.body)["error"] == HTTPStatus(413).phrase


@pytest.mark.parametrize(("size", "expected"), [(99, 200), (100, 200), (101, 413)])
async def test_max_body_size_from_the_running_total_of_a_chunked_body(
    size: int, expected: int
) -> None:
    calls.clear()
    async with raw_server(ROUTER, ServerConfig(max_body_size=100)) as (server, nursery):
        conn = connect(server, nursery)
        half = size // 2
        chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (
            half,
            b"a" * half,
            size - half,
            b"b" * (size - half),
        )
        await conn.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
        )
        head = await conn.response()
        assert head.status_code == expected
        assert calls == ([size] if expected == 200 else [])


async def test_over_limit_content_length_is_answered_before_the_body_and_closes() -> None:
    async with raw_server(ROUTER, ServerConfig(max_body_size=100, max_drain_size=10)) as (
        server,
        nursery,
    ):
        conn = connect(server, nursery)
        await conn.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n")
        raw = await conn.read_until_closed()
        assert status_of(raw) == 413
        assert b"connection: close" in raw


async def test_expect_continue_over_the_limit_gets_413_and_no_100() -> None:
    async with raw_server(ROUTER, ServerConfig(max_body_size=100)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\nExpect: 100-continue\r\n\r\n"
        )
        raw = await conn.read_until_closed()
        assert raw.startswith(b"HTTP/1.1 413 ")
        assert b"100 Continue" not in raw


async def test_expect_continue_within_the_limit_gets_100_then_the_answer() -> None:
    async with raw_server(ROUTER, ServerConfig(max_body_size=100)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
        )
        first = await conn.stream.receive_some()
        assert first.startswith(b"HTTP/1.1 100 Continue\r\n")
        await conn.send(b"abcd")
        head = await conn.response()
        assert head.status_code == 200 and conn.body == b"got 4"


def _head_of_size(size: int) -> bytes:
    base = b"GET / HTTP/1.1\r\nHost: t\r\nX: \r\n\r\n"
    return base[:-4] + b"a" * (size - len(base)) + b"\r\n\r\n"


@pytest.mark.parametrize(("size", "expected"), [(255, 200), (256, 200), (257, 431)])
async def test_max_header_size_in_one_read(size: int, expected: int) -> None:
    async with raw_server(ROUTER, ServerConfig(max_header_size=256)) as (server, nursery):
        conn = connect(server, nursery)
        head = _head_of_size(size)
        assert len(head) == size
        await conn.send(head)
        response = await conn.response()
        assert response.status_code == expected


async def test_max_header_size_across_reads() -> None:
    async with raw_server(ROUTER, ServerConfig(max_header_size=256)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n")
        for _ in range(30):
            await conn.send(b"X-Fill: " + b"a" * 20 + b"\r\n")
        raw = await conn.read_until_closed()
        assert status_of(raw) == 431
        assert error_of(raw)["error"] == "Request Header Fields Too Large"


@pytest.mark.parametrize(("count", "expected"), [(9, 200), (10, 200), (11, 431)])
async def test_max_header_count(count: int, expected: int) -> None:
    async with raw_server(ROUTER, ServerConfig(max_header_count=10)) as (server, nursery):
        conn = connect(server, nursery)
        fields = b"Host: t\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(count - 1))
        await conn.send(b"GET / HTTP/1.1\r\n" + fields + b"\r\n")
        response = await conn.response()
        assert response.status_code == expected


@pytest.mark.parametrize(("extra", "expected"), [(-1, 200), (0, 200), (1, 414)])
async def test_max_request_line_size(extra: int, expected: int) -> None:
    limit = 64
    async with raw_server(ROUTER, ServerConfig(max_request_line_size=limit)) as (server, nursery):
        conn = connect(server, nursery)
        fixed = len(b"GET /? HTTP/1.1")
        line = b"GET /?" + b"q" * (limit + extra - fixed) + b" HTTP/1.1"
        assert len(line) == limit + extra
        await conn.send(line + b"\r\nHost: t\r\n\r\n")
        response = await conn.response()
        assert response.status_code == expected


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_max_requests_per_connection(limit: int) -> None:
    config = ServerConfig(max_requests_per_connection=limit)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" * (limit + 1))
        responses = await conn.responses(limit + 1)
        assert len(responses) == limit  # the last allowed one says close; nothing after it
        assert dict(responses[-1].headers).get(b"connection") == b"close"
        assert all(b"connection" not in dict(r.headers) for r in responses[:-1])
        assert await conn.is_closed()


@pytest.mark.parametrize(("leftover", "keeps_alive"), [(9, True), (10, True), (11, False)])
async def test_unread_body_is_drained_up_to_max_drain_size(
    leftover: int, keeps_alive: bool
) -> None:
    config = ServerConfig(max_drain_size=10)
    router = Router().post("/ignore", hello)  # never reads its body
    async with raw_server(router, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(
            b"POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % leftover
            + b"z" * leftover
            + b"POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
        )
        responses = await conn.responses(2)
        assert len(responses) == (2 if keeps_alive else 1)
        closing = dict(responses[0].headers).get(b"connection") == b"close"
        assert closing is not keeps_alive


async def test_pipelined_requests_are_answered_in_order() -> None:
    async def numbered(request: Request) -> Response:
        return Response.text(request.uri.raw_path)

    async with raw_server(Router().get("/{n}", numbered)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"".join(b"GET /%d HTTP/1.1\r\nHost: t\r\n\r\n" % i for i in range(5)))
        await conn.responses(5)
        assert conn.bodies == [b"/%d" % i for i in range(5)]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        b"GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n",
        b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GET * HTTP/1.1\r\nHost: t\r\n\r\n",
    ],
)
async def test_smuggling_shapes_get_400_and_close_and_the_server_keeps_serving(
    request_bytes: bytes,
) -> None:
    async with raw_server(ROUTER) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" + request_bytes)
        raw = await conn.read_until_closed()
        first, second = raw.split(b"HTTP/1.1 ", 2)[1:]
        assert first.startswith(b"200 ")
        assert second.startswith(b"400 Bad Request\r\n")
        assert b"connection: close" in second
        again = connect(server, nursery)
        await again.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await again.response()).status_code == 200


async def test_http2_request_line_on_http1_is_505() -> None:
    async with raw_server(ROUTER) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET / HTTP/2.0\r\nHost: t\r\n\r\n")
        raw = await conn.read_until_closed()
        assert status_of(raw) == 505
        assert error_of(raw)["error"] == "HTTP Version Not Supported"


# -- max_json_size: what Json[T] parses (the stdlib parser holds the event loop) ------------
async def parse(value: Json[Any]) -> Response:
    return Response.json({"items": len(value)})


JSON_ROUTER = Router().post("/json", parse)


def _json_body(size: int) -> bytes:
    body = b'["' + b"x" * (size - 4) + b'"]'
    assert len(body) == size
    return body


@pytest.mark.parametrize(("size", "expected"), [(99, 200), (100, 200), (101, 413)])
async def test_max_json_size_from_content_length(size: int, expected: int) -> None:
    body = _json_body(size)
    head = b"POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    config = ServerConfig(max_json_size=100)
    async with raw_server(JSON_ROUTER, config) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(head + b"Content-Length: %d\r\n\r\n" % size + body)
        (response,) = await connection.responses(1)
        assert response.status_code == expected
        if expected == 413:
            assert "max_json_size (100 bytes)" in str(json.loads(connection.body)["message"])


@pytest.mark.parametrize(("size", "expected"), [(99, 200), (100, 200), (101, 413)])
async def test_max_json_size_from_the_running_total_of_a_chunked_body(
    size: int, expected: int
) -> None:
    body = _json_body(size)
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + 10]), body[i : i + 10]) for i in range(0, size, 10)
    )
    head = b"POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    async with raw_server(JSON_ROUTER, ServerConfig(max_json_size=100)) as (server, nursery):
        connection = connect(server, nursery)
        await connection.send(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
        (response,) = await connection.responses(1)
        assert response.status_code == expected


async def test_max_json_size_defaults_to_512_kib() -> None:
    assert ServerConfig().max_json_size == 256 * 1024
    head = b"POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    async with raw_server(JSON_ROUTER) as (server, nursery):
        for size, expected in [(256 * 1024, 200), (256 * 1024 + 1, 413)]:
            connection = connect(server, nursery)
            body = _json_body(size)
            await connection.send(head + b"Content-Length: %d\r\n\r\n" % size + body)
            (response,) = await connection.responses(1)
            assert response.status_code == expected
