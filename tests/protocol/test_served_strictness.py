"""The strict protocol checks through the real connection code, over in-memory streams:
what the client gets back, how soon, and that no handler runs for refused bytes."""

from __future__ import annotations

import json
import ssl
from http import HTTPStatus

import pytest
import trio
import trio.testing

from tests.rawhttp import connect, raw_server, status_of
from trioframe import Request, Response, Router, ServerConfig

HANDLED: list[str] = []


async def smuggled() -> Response:
    HANDLED.append("smuggled")
    return Response.text("smuggled")


async def user(request: Request) -> Response:
    HANDLED.append(f"user {request.param('name')!r}")
    return Response.text("user")


ROUTER = Router().get("/smuggled", smuggled).get("/users/{name}", user)
CONFIG = ServerConfig(header_timeout=30)
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


async def test_a_percent_encoded_nul_in_a_path_parameter_is_400() -> None:
    HANDLED.clear()
    async with raw_server(ROUTER, CONFIG) as (server, nursery):
        conn = connect(server, nursery)
        await conn.send(b"GET /users/a%00b HTTP/1.1\r\nHost: t\r\n\r\n")
        head = await conn.response()
        assert head.status_code == 400
        assert json.loads(conn.body)["status"] == 400
        await conn.send(b"GET /users/a%41b HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await conn.response()).status_code == 200
    assert HANDLED == ["user 'aAb'"]


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
