"""``trusted_proxies`` and ``proxy_protocol`` in the server: what a handler and the access log
see, in memory (``TestClient(client=...)`` plays the connecting peer) and over loopback with
PROXY protocol headers written by hand (the byte layouts of HAProxy's specification)."""

from __future__ import annotations

import ipaddress
import logging
import socket
import struct
from typing import Any

import httpx
import pytest
import trio

from trioframe import ConfigurationError, Request, Response, Router, ServerConfig
from trioframe.middleware import LoggerMiddleware
from trioframe.testing import TestClient

from ..loopback._support import RawConnection, serving


async def whoami(request: Request) -> Response:
    return Response.json(
        {
            "client": list(request.client) if request.client else None,
            "peer": list(request.peer) if request.peer else None,
            "scheme": request.scheme,
            "host": request.header("host"),
        }
    )


ROUTER = Router().get("/", whoami)
TRUSTING = ServerConfig(trusted_proxies=["10.0.0.0/8", "192.0.2.1"])


async def seen(
    headers: dict[str, str], *, peer: str, config: ServerConfig = TRUSTING
) -> dict[str, Any]:
    async with TestClient(ROUTER, config, client=(peer, 4000)) as client:
        answer: dict[str, Any] = (await client.get("/", headers=headers)).json()
    return answer


async def test_a_trusted_proxy_names_the_client_scheme_and_host() -> None:
    answer = await seen(
        {
            "x-forwarded-for": "203.0.113.7",
            "x-forwarded-proto": "https",
            "x-forwarded-host": "shop.example",
        },
        peer="10.1.2.3",
    )
    assert answer == {
        "client": ["203.0.113.7", 0],
        "peer": ["10.1.2.3", 4000],
        "scheme": "https",
        "host": "shop.example",
    }


async def test_a_proxy_that_names_only_the_scheme_leaves_the_client() -> None:
    answer = await seen({"x-forwarded-proto": "https"}, peer="10.1.2.3")
    assert answer["client"] == answer["peer"] == ["10.1.2.3", 4000]
    assert answer["scheme"] == "https"


async def test_an_untrusted_peer_cannot_choose_its_address() -> None:
    answer = await seen(
        {"x-forwarded-for": "1.2.3.4", "x-forwarded-proto": "https"}, peer="8.8.8.8"
    )
    assert answer["client"] == ["8.8.8.8", 4000] and answer["peer"] == ["8.8.8.8", 4000]
    assert answer["scheme"] == "http" and answer["host"] == "testserver"


async def test_a_forged_leftmost_entry_is_not_believed() -> None:
    # The client sent "6.6.6.6"; the trusted proxy appended the address it saw.
    answer = await seen({"x-forwarded-for": "6.6.6.6, 203.0.113.7"}, peer="10.0.0.1")
    assert answer["client"] == ["203.0.113.7", 0]


async def test_several_trusted_hops_are_walked_from_the_right() -> None:
    answer = await seen(
        {"x-forwarded-for": "6.6.6.6, 198.51.100.9, 10.9.9.9, 192.0.2.1"}, peer="10.0.0.1"
    )
    assert answer["client"] == ["198.51.100.9", 0]


async def test_forwarded_is_read_only_when_chosen() -> None:
    headers = {"forwarded": 'for="[2001:db8::17]:4711";proto=https;host=api.example'}
    ignored = await seen({**headers, "x-forwarded-for": "203.0.113.7"}, peer="10.0.0.1")
    assert ignored["client"] == ["203.0.113.7", 0] and ignored["scheme"] == "http"
    config = TRUSTING.with_proxy_headers("forwarded")
    answer = await seen(headers, peer="10.0.0.1", config=config)
    assert answer["client"] == ["2001:db8::17", 4711]
    assert answer["scheme"] == "https" and answer["host"] == "api.example"


async def test_an_invalid_proto_or_host_is_ignored() -> None:
    answer = await seen(
        {
            "x-forwarded-for": "203.0.113.7",
            "x-forwarded-proto": "javascript",
            "x-forwarded-host": "evil.example/path",
        },
        peer="10.0.0.1",
    )
    assert answer["client"] == ["203.0.113.7", 0]
    assert answer["scheme"] == "http" and answer["host"] == "testserver"


async def test_the_access_log_has_the_client_and_the_proxy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    router = Router().get("/", whoami).middleware(LoggerMiddleware())
    caplog.set_level(logging.INFO, "trioframe.access")
    async with TestClient(router, TRUSTING, client=("10.0.0.1", 4000)) as client:
        await client.get("/", headers={"x-forwarded-for": "203.0.113.7"})
        await client.get("/")
    first, second = (r for r in caplog.records if r.name == "trioframe.access")
    assert first.getMessage().startswith('203.0.113.7:0 via 10.0.0.1:4000 "GET /"')
    assert (first.client, first.peer) == ("203.0.113.7:0", "10.0.0.1:4000")  # type: ignore[attr-defined]
    assert second.getMessage().startswith('10.0.0.1:4000 "GET /"')


@pytest.mark.parametrize(
    "config, message",
    [
        (ServerConfig(trusted_proxies=["*"]), "trusted_proxies"),
        (ServerConfig(trusted_proxies=["10.0.0.1/8"]), "trusted_proxies"),
        (ServerConfig(trusted_proxies=["proxy.example"]), "trusted_proxies"),
        (ServerConfig(proxy_protocol=True), "proxy_protocol=True needs trusted_proxies"),
    ],
)
async def test_a_bad_proxy_setting_fails_at_startup(config: ServerConfig, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        async with TestClient(ROUTER, config):
            pass


# -- the PROXY protocol, over loopback -----------------------------------------------------
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
PROXYING = ServerConfig(trusted_proxies=["127.0.0.1"], proxy_protocol=True, header_timeout=2.0)
REQUEST = b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"


def v2(source: str, source_port: int, *, command: int = 1, tlvs: bytes = b"") -> bytes:
    address = ipaddress.ip_address(source)
    if address.version == 4:
        family, blob = 0x11, address.packed + bytes(4) + struct.pack("!HH", source_port, 443)
    else:
        family, blob = 0x21, address.packed + bytes(16) + struct.pack("!HH", source_port, 443)
    body = blob + tlvs
    return V2_SIGNATURE + bytes([0x20 | command, family]) + struct.pack("!H", len(body)) + body


async def answer_to(port: int, data: bytes, *, source: str = "127.0.0.1") -> bytes:
    """Send ``data`` from ``source`` and read until the server closes."""
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", port))
    stream = trio.SocketStream(sock)
    await stream.send_all(data)
    received = b""
    with trio.fail_after(5):
        try:
            while chunk := await stream.receive_some():
                received += chunk
        except trio.BrokenResourceError:  # closed with our bytes unread: a reset
            pass
    await stream.aclose()
    return received


def body_of(raw: bytes) -> dict[str, Any]:
    return httpx.Response(200, content=raw.split(b"\r\n\r\n", 1)[1]).json()  # type: ignore[no-any-return]


@pytest.mark.loopback
@pytest.mark.parametrize(
    "header, client",
    [
        (b"PROXY TCP4 203.0.113.7 192.0.2.10 51000 443\r\n", ["203.0.113.7", 51000]),
        (b"PROXY TCP6 2001:db8::7 2001:db8::1 51000 443\r\n", ["2001:db8::7", 51000]),
        (b"PROXY UNKNOWN\r\n", None),
        (v2("203.0.113.7", 51000), ["203.0.113.7", 51000]),
        (v2("2001:db8::7", 51000), ["2001:db8::7", 51000]),
        (v2("203.0.113.7", 51000, tlvs=b"\xea\x00\x03vpc"), ["203.0.113.7", 51000]),
        (v2("203.0.113.7", 51000, command=0), None),  # LOCAL: a health check
    ],
    ids=["v1-tcp4", "v1-tcp6", "v1-unknown", "v2-tcp4", "v2-tcp6", "v2-tlv", "v2-local"],
)
async def test_a_proxy_protocol_header_names_the_client(
    header: bytes, client: list[Any] | None
) -> None:
    async with serving(ROUTER, PROXYING) as served:
        raw = await answer_to(served.port, header + REQUEST)
    assert raw.startswith(b"HTTP/1.1 200")
    answer = body_of(raw)
    if client is None:  # no address in the header: the proxy's own
        assert answer["client"][0] == "127.0.0.1" and answer["peer"] == answer["client"]
    else:
        assert answer["client"] == client and answer["peer"][0] == "127.0.0.1"


@pytest.mark.loopback
async def test_a_header_split_across_writes_is_read_whole() -> None:
    async with serving(ROUTER, PROXYING) as served:
        connection = await RawConnection.open(served.host, served.port)
        header = v2("203.0.113.7", 51000)
        for piece in (header[:5], header[5:14], header[14:20], header[20:] + REQUEST[:10]):
            await connection.send(piece)
            await trio.sleep(0.05)  # real sockets, real time: each piece arrives on its own
        await connection.send(REQUEST[10:])
        raw = await connection.read_until_eof()
    assert body_of(raw)["client"] == ["203.0.113.7", 51000]


@pytest.mark.loopback
@pytest.mark.parametrize(
    "data",
    [
        REQUEST,  # no PROXY header from a trusted peer
        b"PROXY TCP4 203.0.113.7 192.0.2.10 51000\r\n" + REQUEST,  # a field missing
        b"PROXY TCP4 " + b"1" * 100 + b"\r\n" + REQUEST,  # longer than 107 bytes
        V2_SIGNATURE + b"\x31\x11\x00\x0c" + bytes(12) + REQUEST,  # version 3
    ],
    ids=["missing", "malformed-v1", "too-long-v1", "bad-version-v2"],
)
async def test_a_trusted_peer_without_a_valid_header_is_closed(
    data: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving(ROUTER, PROXYING) as served:
        assert await answer_to(served.port, data) == b""
        assert await answer_to(served.port, v2("203.0.113.7", 1) + REQUEST)  # still serving
    assert any("PROXY header from" in r.getMessage() for r in caplog.records)


@pytest.mark.loopback
async def test_a_silent_trusted_peer_is_closed_after_header_timeout() -> None:
    async with serving(ROUTER, PROXYING) as served:
        connection = await RawConnection.open(served.host, served.port)
        await connection.send(b"PROXY TCP4 ")
        with trio.fail_after(5):
            assert await connection.read_until_eof() == b""


@pytest.mark.loopback
async def test_an_untrusted_peer_is_served_without_a_header_and_cannot_send_one() -> None:
    async with serving(ROUTER, PROXYING) as served:
        plain = await answer_to(served.port, REQUEST, source="127.0.0.2")
        assert body_of(plain)["client"][0] == "127.0.0.2"
        forged = await answer_to(
            served.port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n" + REQUEST, source="127.0.0.2"
        )
    assert forged.startswith(b"HTTP/1.1 400")  # not HTTP: refused, never believed


@pytest.mark.loopback
async def test_proxy_protocol_then_tls(tmp_path: Any) -> None:
    from ..tls._support import make_certificates

    certificates = make_certificates(tmp_path)
    config = PROXYING.with_tls(certificates.server_file, certificates.server_file)
    context = certificates.client_context()

    def client(port: int) -> bytes:  # a blocking client, in a thread
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(v2("203.0.113.7", 51000))
            with context.wrap_socket(sock, server_hostname="localhost") as tls:
                tls.sendall(REQUEST)
                raw = b""
                while chunk := tls.recv(65536):
                    raw += chunk
        return raw

    async with serving(ROUTER, config) as served:
        raw = await trio.to_thread.run_sync(client, served.port)
    answer = body_of(raw)
    assert answer["client"] == ["203.0.113.7", 51000] and answer["scheme"] == "https"
    assert answer["peer"][0] == "127.0.0.1"
