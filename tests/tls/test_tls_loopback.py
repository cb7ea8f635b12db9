"""HTTPS over real loopback sockets, with independent clients (httpx, curl, the `websockets`
library, raw TCP): the negotiated parameters, hostile and broken handshakes, mutual TLS."""

from __future__ import annotations

import json
import logging
import re
import ssl
import warnings
from typing import Any

import httpx
import pytest
import trio
import websockets.sync.client

from tests.loopback._support import serving
from trioframe import Request, Response, Router, ServerConfig, WebSocketConnection

from ._support import Certificates

pytestmark = pytest.mark.loopback


async def whoami(request: Request) -> Response:
    tls = request.tls
    assert tls is not None
    client = tls.client_certificate
    return Response.json(
        {
            "scheme": request.scheme,
            "version": tls.version,
            "alpn": tls.alpn_protocol,
            "cipher": tls.cipher,
            "client": None if client is None else str(client.get("subjectAltName")),
            "client_der": tls.client_certificate_der is not None,
        }
    )


async def echo(ws: WebSocketConnection) -> None:
    async for message in ws:
        text = getattr(message, "text", None)
        if text is not None:
            await ws.send_text(f"echo: {text}")


ROUTER = Router().get("/", whoami).websocket("/ws", echo)


def tls_config(certs: Certificates, **settings: Any) -> ServerConfig:
    return ServerConfig(**settings).with_tls(certs.server_file, certs.server_file)


async def https_get(certs: Certificates, port: int, *, with_certificate: bool = False) -> Any:
    context = certs.client_context(with_certificate=with_certificate)
    async with httpx.AsyncClient(verify=context) as client:
        response = await client.get(f"https://127.0.0.1:{port}/")
    assert response.status_code == 200
    return response.json()


async def closed_within(stream: trio.SocketStream, seconds: float) -> bytes:
    """Everything the server sends until it closes, which must happen within ``seconds``."""
    received = b""
    with trio.fail_after(seconds):
        try:
            while chunk := await stream.receive_some(65536):
                received += chunk
        except trio.BrokenResourceError:  # a reset is a close too
            pass
    return received


# -- what a client sees --------------------------------------------------------------------------
async def test_httpx_sees_https_and_the_negotiated_parameters(certs: Certificates) -> None:
    async with serving(ROUTER, tls_config(certs)) as served:
        seen = await https_get(certs, served.port)
    assert seen["scheme"] == "https"
    assert seen["version"] in ("TLSv1.2", "TLSv1.3")
    assert seen["alpn"] == "http/1.1"
    assert seen["cipher"]
    assert seen["client"] is None and seen["client_der"] is False


async def test_curl_trusting_the_ca(certs: Certificates) -> None:
    async with serving(ROUTER, tls_config(certs)) as served:
        url = f"https://127.0.0.1:{served.port}/"
        done = await trio.run_process(
            ["curl", "-sS", "--cacert", str(certs.ca_file), url], capture_stdout=True
        )
    assert json.loads(done.stdout)["scheme"] == "https"


async def test_curl_refuses_a_server_it_does_not_trust(certs: Certificates) -> None:
    async with serving(ROUTER, tls_config(certs)) as served:
        url = f"https://127.0.0.1:{served.port}/"
        done = await trio.run_process(["curl", "-sS", url], check=False, capture_stderr=True)
    assert done.returncode == 60  # curl: the peer certificate cannot be authenticated


async def test_wss_with_the_websockets_library(certs: Certificates) -> None:
    def talk(url: str) -> str:
        with websockets.sync.client.connect(url, ssl=certs.client_context()) as ws:
            ws.send("hello")
            reply = ws.recv(timeout=5)
        assert isinstance(reply, str)
        return reply

    async with serving(ROUTER, tls_config(certs)) as served:
        url = f"wss://127.0.0.1:{served.port}/ws"
        assert await trio.to_thread.run_sync(talk, url) == "echo: hello"


# -- hostile and broken handshakes ---------------------------------------------------------------
async def test_a_client_that_sends_nothing_is_closed_after_the_handshake_timeout(
    certs: Certificates,
) -> None:
    handshake_timeout = 0.5
    config = tls_config(certs, tls_handshake_timeout=handshake_timeout, header_timeout=30.0)
    async with serving(ROUTER, config) as served:
        stream = await trio.open_tcp_stream(served.host, served.port)
        started = trio.current_time()
        assert await closed_within(stream, 5) == b""
        assert trio.current_time() - started >= handshake_timeout * 0.9
        await stream.aclose()


@pytest.mark.parametrize(
    "garbage",
    [b"hello, this is not a ClientHello\r\n\r\n", b"\x16\x03\x01\x00\x05abcde", b"\x00" * 64],
    ids=["text", "a broken record", "zeros"],
)
async def test_garbage_instead_of_a_client_hello_is_closed_at_once(
    certs: Certificates, garbage: bytes
) -> None:
    config = tls_config(certs, tls_handshake_timeout=30.0)
    async with serving(ROUTER, config) as served:
        stream = await trio.open_tcp_stream(served.host, served.port)
        await stream.send_all(garbage)
        received = await closed_within(stream, 3)  # not the 30 s handshake timeout
        assert not received.startswith(b"HTTP/")
        await stream.aclose()


async def test_a_plain_http_request_on_the_tls_port_is_closed_at_once(
    certs: Certificates,
) -> None:
    config = tls_config(certs, tls_handshake_timeout=30.0)
    async with serving(ROUTER, config) as served:
        stream = await trio.open_tcp_stream(served.host, served.port)
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        received = await closed_within(stream, 3)
        assert not received.startswith(b"HTTP/")  # no plain-HTTP answer from a TLS port
        await stream.aclose()


async def test_failed_handshakes_are_one_debug_line_never_a_traceback(
    certs: Certificates, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="trioframe")
    async with serving(ROUTER, tls_config(certs)) as served:
        stream = await trio.open_tcp_stream(served.host, served.port)
        await stream.send_all(b"not TLS at all\r\n\r\n")
        await closed_within(stream, 3)
        await stream.aclose()
        await https_get(certs, served.port)  # a later request waits for the log line
    failures = [r for r in caplog.records if "TLS handshake" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].levelno == logging.DEBUG and failures[0].exc_info is None
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_200_failing_handshakes_beside_a_working_client(certs: Certificates) -> None:
    answered = 0

    async def hostile(host: str, port: int) -> None:
        stream = await trio.open_tcp_stream(host, port)
        try:
            await stream.send_all(b"\x16\x03\x01\x02\x00" + b"\xff" * 512)
            await closed_within(stream, 10)
        finally:
            await stream.aclose()

    async def working(port: int) -> None:
        nonlocal answered
        async with httpx.AsyncClient(verify=certs.client_context()) as client:
            for _ in range(20):
                response = await client.get(f"https://127.0.0.1:{port}/")
                assert response.status_code == 200
                answered += 1

    with trio.fail_after(30):
        async with serving(ROUTER, tls_config(certs)) as served, trio.open_nursery() as nursery:
            for _ in range(200):
                nursery.start_soon(hostile, served.host, served.port)
            nursery.start_soon(working, served.port)
    assert answered == 20


async def test_a_slow_handshake_never_delays_another(certs: Certificates) -> None:
    config = tls_config(certs, tls_handshake_timeout=30.0)
    async with serving(ROUTER, config) as served:
        silent = [await trio.open_tcp_stream(served.host, served.port) for _ in range(5)]
        with trio.fail_after(5):  # not the 30 s the silent ones may take
            assert (await https_get(certs, served.port))["scheme"] == "https"
        for stream in silent:
            await stream.aclose()


async def test_tls_1_1_and_older_are_refused(certs: Certificates) -> None:
    old = certs.client_context()
    with warnings.catch_warnings():  # the very thing under test: the ssl module warns too
        warnings.simplefilter("ignore", DeprecationWarning)
        old.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        old.maximum_version = ssl.TLSVersion.TLSv1_1
    async with serving(ROUTER, tls_config(certs)) as served:
        async with httpx.AsyncClient(verify=old) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"https://127.0.0.1:{served.port}/")
        assert (await https_get(certs, served.port))["version"] in ("TLSv1.2", "TLSv1.3")


# -- mutual TLS ------------------------------------------------------------------------------------
def mutual_config(certs: Certificates) -> ServerConfig:
    return ServerConfig().with_tls(certs.server_file, certs.server_file, client_ca=certs.ca_file)


async def test_mutual_tls_with_a_client_certificate(certs: Certificates) -> None:
    async with serving(ROUTER, mutual_config(certs)) as served:
        seen = await https_get(certs, served.port, with_certificate=True)
    assert "ada@example.org" in seen["client"]
    assert seen["client_der"] is True


async def test_mutual_tls_without_a_client_certificate_is_refused(certs: Certificates) -> None:
    async with serving(ROUTER, mutual_config(certs)) as served:
        async with httpx.AsyncClient(verify=certs.client_context()) as client:
            # TLS 1.3 reports the refusal after the handshake, at the first read.
            with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
                await client.get(f"https://127.0.0.1:{served.port}/")
        seen = await https_get(certs, served.port, with_certificate=True)  # still serving
    assert seen["client"] is not None


# -- a development certificate -------------------------------------------------------------------
async def test_self_signed_logs_the_ca_file_clients_can_trust(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="trioframe")
    config = ServerConfig().with_self_signed()
    async with serving(ROUTER, config) as served:
        logged = " ".join(r.getMessage() for r in caplog.records)
        match = re.search(r"--cacert (\S+\.pem)", logged)
        assert match is not None, logged
        assert f"serving on https://127.0.0.1:{served.port}" in logged
        context = ssl.create_default_context(cafile=match[1])
        async with httpx.AsyncClient(verify=context) as client:
            response = await client.get(f"https://localhost:{served.port}/")
    assert response.json()["scheme"] == "https"
