"""A TLS client on a plain HTTP port: its ClientHello is recognised from the first byte and
the connection closed at once without an answer (an HTTP answer is garbage to TLS), rather
than held open until ``header_timeout``."""

from __future__ import annotations

import ssl

import pytest
import trio

from trioframe import Response, Router, ServerConfig

from ._support import RawConnection, fetch, serving, simple_get

pytestmark = pytest.mark.loopback


async def index() -> Response:
    return Response.text("index")


ROUTER = Router().get("/", index)
CONFIG = ServerConfig(header_timeout=30)  # the tests finish well before it could fire


def _client_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


async def test_a_real_tls_client_is_closed_at_once() -> None:
    with trio.fail_after(5):
        async with serving(ROUTER, CONFIG) as served:
            tcp = await trio.open_tcp_stream(served.host, served.port)
            tls = trio.SSLStream(tcp, _client_context(), server_hostname="localhost")
            with pytest.raises(trio.BrokenResourceError) as info:
                await tls.do_handshake()
            # The server closed the connection: EOF (or a reset), not bytes that are not TLS.
            assert isinstance(info.value.__cause__, ssl.SSLEOFError | ConnectionResetError)
            await tcp.aclose()
            response, connection = await fetch(served.host, served.port, simple_get())
            assert response.status == 200
            await connection.aclose()


async def test_client_hello_bytes_get_no_answer() -> None:
    outgoing = ssl.MemoryBIO()
    tls = _client_context().wrap_bio(ssl.MemoryBIO(), outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    hello = outgoing.read()
    with trio.fail_after(5):
        async with serving(ROUTER, CONFIG) as served:
            connection = await RawConnection.open(served.host, served.port)
            await connection.send(hello)
            assert await connection.read_until_eof() == b""
            await connection.aclose()
