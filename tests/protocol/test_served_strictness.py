"""The strict protocol checks through the real connection code, over in-memory streams:
what the client gets back, how soon, and that no handler runs for refused bytes."""

from __future__ import annotations

import json
import logging
import ssl
from http import HTTPStatus

import pytest
import trio
import trio.testing

from tests.rawhttp import connect, raw_server, status_of
from trioframe import Request, Response, Router, ServerConfig

HANDLED: list[str] = []


async def upload(request: Request) -> Response:
    HANDLED.append(f"upload {len(request.body)}")
    return Response.text("stored")


async def smuggled() -> Response:
    HANDLED.append("smuggled")
    return Response.text("smuggled")


async def user(request: Request) -> Response:
    HANDLED.append(f"user {request.param('name')!r}")
    return Response.text("user")


ROUTER = Router().post("/upload", upload).get("/smuggled", smuggled).get("/users/{name}", user)
CONFIG = ServerConfig(header_timeout=30)
CHUNKED_HEAD = b"POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"


def assert_one_error_response(raw: bytes, status: int) -> None:
    """``raw`` (everything sent until close) is one ``status`` answer with the JSON error
    body and ``Connection: close``, and nothing after it."""
    assert status_of(raw) == status, raw
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower()
    assert raw.count(b"HTTP/1.1 ") == 1
    error = json.loads(body)
    assert error["status"] == status and error["error"] == HTTPStatus(status).phrase


SMUGGLING_SHAPES = {
    "bare LF ending the trailer section": b"0\r\n\n",
    "bare LF in a trailer field": b"0\r\nX: y\n\r\n",
    "obs-fold in the trailer": b"0\r\nX: y\r\n z\r\n\r\n",
    "control character in a trailer field": b"0\r\nX: a\x01b\r\n\r\n",
    "CR inside a chunk extension": b"5;a\rb\r\nhello\r\n0\r\n\r\n",
    "NUL inside a chunk extension": b"5;a\x00\r\nhello\r\n0\r\n\r\n",
    "DEL inside a chunk extension": b"5;a\x7f\r\nhello\r\n0\r\n\r\n",
    "space after the chunk size": b"5 \r\nhello\r\n0\r\n\r\n",
    "junk after the chunk size": b"5 junk\r\nhello\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("body", SMUGGLING_SHAPES.values(), ids=SMUGGLING_SHAPES.keys())
async def test_lenient_chunked_framing_is_400_and_the_pipelined_request_never_runs(
    body: bytes, autojump_clock: trio.testing.MockClock
) -> None:
    HANDLED.clear()
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(CHUNKED_HEAD + body + SMUGGLED)
        assert_one_error_response(await conn.read_until_closed(), 400)
    assert HANDLED == []


async def test_a_valid_chunked_body_with_trailers_then_a_pipelined_request() -> None:
    """Control for the shapes above."""
    HANDLED.clear()
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        body = b"5;a=b\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\n"
        await conn.send(CHUNKED_HEAD + body + SMUGGLED)
        assert [r.status_code for r in await conn.responses(2)] == [200, 200]
    assert HANDLED == ["upload 5", "smuggled"]


async def test_a_trailer_section_over_max_header_size_is_431(
    autojump_clock: trio.testing.MockClock,
) -> None:
    HANDLED.clear()
    async with raw_server(ROUTER, ServerConfig(max_header_size=1024)) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(CHUNKED_HEAD + b"0\r\nX: " + b"v" * 1024 + b"\r\n\r\n" + SMUGGLED)
        assert_one_error_response(await conn.read_until_closed(), 431)
    assert HANDLED == []


async def test_a_head_with_bare_lf_line_ends_is_400_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        await conn.send(b"GET /smuggled HTTP/1.1\nHost: t\n\n")
        raw = await conn.read_until_closed()
        assert trio.current_time() - start < CONFIG.header_timeout
        assert_one_error_response(raw, 400)


def client_hello() -> bytes:
    """The first bytes a real TLS client sends: a TLS record holding a ClientHello."""
    outgoing = ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(
        ssl.MemoryBIO(), outgoing, server_hostname="localhost"
    )
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


async def test_a_tls_client_hello_closes_the_connection_silently_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    hello = client_hello()
    assert hello[:1] == b"\x16"
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        start = trio.current_time()
        await conn.send(hello)
        assert await conn.read_until_closed() == b""
        assert trio.current_time() - start < 1  # nothing waited for: no timeout, no linger
        conn = connect(server, nursery)  # the server goes on serving HTTP
        await conn.send(SMUGGLED)
        assert (await conn.response()).status_code == 200


REFUSED_TARGETS = {
    "a fragment": b"/users/a#b",
    "a fragment in the query": b"/users/a?q=1#b",
    "an empty fragment": b"/users/a#",
    "a fragment in an absolute-form target": b"http://t/users/a#b",
    "a percent-encoded NUL in a path parameter": b"/users/a%00b",
    "a percent-encoded NUL in a query value": b"/users/a?q=%00",
    "a percent-encoded NUL in a query name": b"/users/a?%00=1",
    "a percent-encoded NUL in an absolute-form target": b"http://t/users/a%00",
}


@pytest.mark.parametrize("target", REFUSED_TARGETS.values(), ids=REFUSED_TARGETS.keys())
async def test_a_fragment_or_a_percent_encoded_nul_in_the_target_is_400(
    target: bytes, autojump_clock: trio.testing.MockClock
) -> None:
    """No handler sees it; the connection closes after the error, the server serves others."""
    HANDLED.clear()
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n\r\n" + SMUGGLED)
        assert_one_error_response(await conn.read_until_closed(), 400)
        conn = connect(server, nursery)
        await conn.send(b"GET /users/a%41b%2500?q=%2500 HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await conn.response()).status_code == 200
    assert HANDLED == ["user 'aAb%00'"]


@pytest.mark.parametrize("target", [b"http:///smuggled", b"http://?x", b"https://"])
async def test_an_absolute_form_target_without_a_host_is_400(
    target: bytes, autojump_clock: trio.testing.MockClock
) -> None:
    HANDLED.clear()
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n\r\n")
        assert_one_error_response(await conn.read_until_closed(), 400)
    assert HANDLED == []


def content_length_upload(digits: int) -> bytes:
    """An upload of ``hello`` whose Content-Length is 5 written with ``digits`` digits
    (leading zeros: the value fits any integer, only the digits are many)."""
    length = b"5".rjust(digits, b"0")
    return b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: " + length + b"\r\n\r\nhello"


@pytest.mark.parametrize("parser", ["h11", "llhttp"])
@pytest.mark.parametrize("digits", [19, 20])
async def test_a_content_length_of_up_to_20_digits_is_read(parser: str, digits: int) -> None:
    HANDLED.clear()
    config = ServerConfig(header_timeout=30, http1_parser=parser)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(content_length_upload(digits) + SMUGGLED)
        assert [r.status_code for r in await conn.responses(2)] == [200, 200]
    assert HANDLED == ["upload 5", "smuggled"]


@pytest.mark.parametrize("parser", ["h11", "llhttp"])
@pytest.mark.parametrize("digits", [21, 4301, 10_000])
async def test_a_content_length_of_21_digits_or_more_is_400_on_both_parsers(
    parser: str,
    digits: int,
    autojump_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """h11's limit (20 digits) on both paths; never a failure inside the connection (an
    integer of more than 4,300 digits is one Python refuses to read)."""
    HANDLED.clear()
    config = ServerConfig(header_timeout=30, http1_parser=parser)
    async with raw_server(ROUTER, config) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(content_length_upload(digits) + SMUGGLED)
        assert_one_error_response(await conn.read_until_closed(), 400)
        conn = connect(server, nursery)  # the server goes on serving
        await conn.send(SMUGGLED)
        assert (await conn.response()).status_code == 200
    assert HANDLED == ["smuggled"]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
