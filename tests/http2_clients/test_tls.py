"""HTTP/2 over TLS (ALPN ``h2``) with independent clients on a real loopback socket: curl,
httpx, h2load and a raw ``ssl`` client; what ALPN picks when one side does not offer h2."""

from __future__ import annotations

import json

import httpx
import pytest
import trio

from tests.loopback._support import RawConnection, serving
from tests.tls._support import Certificates

from ._support import curl, h2load, tls_config
from .apps import whoami_router

pytestmark = pytest.mark.loopback


async def test_curl_negotiates_h2_by_alpn(certs: Certificates) -> None:
    async with serving(whoami_router(), tls_config(certs)) as served:
        url = f"https://127.0.0.1:{served.port}/"
        result = await curl("--http2", "--cacert", str(certs.ca_file), url)
    assert (result.version, result.status) == ("HTTP/2", 200)
    seen = json.loads(result.body)
    assert (seen["version"], seen["scheme"], seen["alpn"]) == ("2", "https", "h2")


async def test_httpx_negotiates_h2_by_alpn_on_one_connection(certs: Certificates) -> None:
    async with (
        serving(whoami_router(), tls_config(certs)) as served,
        httpx.AsyncClient(http2=True, verify=certs.client_context()) as client,
    ):
        url = f"https://127.0.0.1:{served.port}/"
        responses = [await client.get(url) for _ in range(3)]
        echoed = await client.post(f"https://127.0.0.1:{served.port}/echo", content=b"z" * 300_000)
    assert {r.http_version for r in responses} == {"HTTP/2"}
    seen = [r.json() for r in responses]
    assert {(s["version"], s["alpn"], s["scheme"]) for s in seen} == {("2", "h2", "https")}
    assert len({s["port"] for s in seen}) == 1
    assert echoed.http_version == "HTTP/2" and echoed.content == b"z" * 300_000


@pytest.mark.parametrize("flag", ["--http1.1", "--no-alpn"])
async def test_curl_without_h2_in_alpn_gets_http1_1(certs: Certificates, flag: str) -> None:
    """``--http1.1`` offers only http/1.1; ``--no-alpn`` offers nothing: HTTP/1.1 both."""
    async with serving(whoami_router(), tls_config(certs)) as served:
        url = f"https://127.0.0.1:{served.port}/"
        result = await curl(flag, "--cacert", str(certs.ca_file), url)
    assert (result.version, result.status) == ("HTTP/1.1", 200)
    seen = json.loads(result.body)
    assert seen["version"] == "1.1"
    assert seen["alpn"] == ("http/1.1" if flag == "--http1.1" else None)


async def test_httpx_offering_only_http1_1_gets_http1_1(certs: Certificates) -> None:
    async with (
        serving(whoami_router(), tls_config(certs)) as served,
        httpx.AsyncClient(verify=certs.client_context()) as client,
    ):
        response = await client.get(f"https://127.0.0.1:{served.port}/")
    assert response.http_version == "HTTP/1.1"
    assert (response.json()["version"], response.json()["alpn"]) == ("1.1", "http/1.1")


async def test_with_http2_off_a_client_offering_h2_gets_http1_1(certs: Certificates) -> None:
    async with serving(whoami_router(), tls_config(certs, http2=False)) as served:
        url = f"https://127.0.0.1:{served.port}/"
        by_curl = await curl("--http2", "--cacert", str(certs.ca_file), url)
        async with httpx.AsyncClient(http2=True, verify=certs.client_context()) as client:
            by_httpx = await client.get(url)
    assert by_curl.version == "HTTP/1.1"
    assert json.loads(by_curl.body)["alpn"] == "http/1.1"
    assert by_httpx.http_version == "HTTP/1.1"
    assert (by_httpx.json()["version"], by_httpx.json()["alpn"]) == ("1.1", "http/1.1")


@pytest.mark.parametrize(
    ("http2", "offered", "selected"),
    [
        (True, ["h2", "http/1.1"], "h2"),
        (True, ["http/1.1", "h2"], "h2"),  # the server's preference, not the client's order
        (True, ["http/1.1"], "http/1.1"),
        (False, ["h2", "http/1.1"], "http/1.1"),
    ],
)
async def test_what_alpn_selects(
    certs: Certificates, http2: bool, offered: list[str], selected: str
) -> None:
    context = certs.client_context()
    context.set_alpn_protocols(offered)
    async with serving(whoami_router(), tls_config(certs, http2=http2)) as served:
        raw = await trio.open_tcp_stream(served.host, served.port)
        stream = trio.SSLStream(raw, context, server_hostname="127.0.0.1")
        with trio.fail_after(5):
            await stream.do_handshake()
        assert stream.selected_alpn_protocol() == selected
        await stream.aclose()


async def test_http1_1_after_alpn_http1_1_is_plain_http(certs: Certificates) -> None:
    """A raw TLS client that negotiated http/1.1 gets an HTTP/1.1 response head."""
    context = certs.client_context()
    context.set_alpn_protocols(["http/1.1"])
    async with serving(whoami_router(), tls_config(certs)) as served:
        raw = await trio.open_tcp_stream(served.host, served.port)
        stream = trio.SSLStream(raw, context, server_hostname="127.0.0.1")
        connection = RawConnection(stream)  # type: ignore[arg-type]
        with trio.fail_after(5):
            await connection.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            response = await connection.read_response()
        await stream.aclose()
    assert (response.version, response.status) == ("HTTP/1.1", 200)
    assert response.json()["alpn"] == "http/1.1"  # type: ignore[index]


async def test_h2load_3000_requests_over_tls(certs: Certificates) -> None:
    async with serving(whoami_router(), tls_config(certs)) as served:
        url = f"https://127.0.0.1:{served.port}/hello"
        result = await h2load(url, "-n", "3000", "-c", "10", "-m", "10")
    assert result.protocol == "h2"
    assert (result.total, result.done, result.succeeded) == (3000, 3000, 3000)
    assert (result.failed, result.errored, result.timeout) == (0, 0, 0)
    assert result.status_2xx == 3000
    assert result.data_bytes == 3000 * len(b"hello")
