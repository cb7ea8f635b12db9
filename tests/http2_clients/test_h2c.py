"""HTTP/2 over cleartext (h2c, prior knowledge) with independent clients on a real loopback
socket: curl, httpx and h2load; HTTP/1.1 on the same port; ``Upgrade: h2c`` declined."""

from __future__ import annotations

import json
import pathlib

import httpx
import pytest
import trio

from tests.loopback._support import RawConnection, serving
from trioframe import ServerConfig

from ._support import curl, h2_config, h2load
from .apps import whoami_router

pytestmark = pytest.mark.loopback


async def test_curl_with_prior_knowledge_speaks_http2() -> None:
    async with serving(whoami_router(), h2_config()) as served:
        result = await curl("--http2-prior-knowledge", served.url + "/")
    assert (result.version, result.status) == ("HTTP/2", 200)
    assert result.header("content-type") == "application/json"
    assert result.header("content-length") == str(len(result.body))
    seen = json.loads(result.body)
    assert (seen["version"], seen["scheme"], seen["alpn"]) == ("2", "http", None)


async def test_curl_posts_a_body_over_http2(tmp_path: pathlib.Path) -> None:
    body = bytes(range(256)) * 1000  # 256 000 bytes: several windows' worth
    (tmp_path / "body.bin").write_bytes(body)
    async with serving(whoami_router(), h2_config()) as served:
        result = await curl(
            "--http2-prior-knowledge", "--data-binary", f"@{tmp_path / 'body.bin'}",
            served.url + "/echo",
        )  # fmt: skip
    assert (result.version, result.status) == ("HTTP/2", 200)
    assert result.body == body


async def test_httpx_h2c_sends_every_request_on_one_connection() -> None:
    async with (
        serving(whoami_router(), h2_config()) as served,
        httpx.AsyncClient(http1=False, http2=True) as client,
    ):
        responses = [await client.get(served.url + "/") for _ in range(5)]
    assert {r.http_version for r in responses} == {"HTTP/2"}
    seen = [r.json() for r in responses]
    assert {s["version"] for s in seen} == {"2"}
    assert len({s["port"] for s in seen}) == 1  # one connection for all five


async def test_http1_1_on_the_same_port_as_h2c() -> None:
    async with serving(whoami_router(), h2_config()) as served:
        async with httpx.AsyncClient() as client:
            plain = await client.get(served.url + "/")
        by_curl = await curl("--http1.1", served.url + "/")
        async with httpx.AsyncClient(http1=False, http2=True) as client:
            h2 = await client.get(served.url + "/")
    assert plain.http_version == "HTTP/1.1" and plain.json()["version"] == "1.1"
    assert by_curl.version == "HTTP/1.1" and json.loads(by_curl.body)["version"] == "1.1"
    assert h2.http_version == "HTTP/2" and h2.json()["version"] == "2"


async def test_curl_upgrade_to_h2c_is_declined() -> None:
    """``curl --http2`` on http:// asks for ``Upgrade: h2c``: the server answers the request
    over HTTP/1.1 (no 101), which curl accepts."""
    async with serving(whoami_router(), h2_config()) as served:
        result = await curl("--http2", served.url + "/")
    assert (result.version, result.status) == ("HTTP/1.1", 200)
    seen = json.loads(result.body)
    assert seen["upgrade"] == "h2c"  # curl did ask
    assert seen["version"] == "1.1"


@pytest.mark.parametrize("http2", [True, False], ids=["http2 on", "http2 off"])
async def test_a_raw_upgrade_to_h2c_gets_http1_1_200_and_the_connection_goes_on(
    http2: bool,
) -> None:
    upgrade = (
        b"GET / HTTP/1.1\r\nHost: test\r\nConnection: Upgrade, HTTP2-Settings\r\n"
        b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
    )
    async with serving(whoami_router(), ServerConfig(http2=http2)) as served:
        connection = await RawConnection.open(served.host, served.port)
        with trio.fail_after(5):
            await connection.send(upgrade)
            first = await connection.read_response()
            await connection.send(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            second = await connection.read_response()
        await connection.aclose()
    assert (first.version, first.status) == ("HTTP/1.1", 200)
    assert first.header("upgrade") is None
    assert first.json() == {**second.json(), "upgrade": "h2c"}  # type: ignore[dict-item]
    assert (second.version, second.status) == ("HTTP/1.1", 200)


async def test_h2load_3000_requests_over_many_streams() -> None:
    async with serving(whoami_router(), h2_config()) as served:
        result = await h2load(served.url + "/hello", "-n", "3000", "-c", "10", "-m", "10")
    assert result.protocol == "h2c"
    assert (result.total, result.done, result.succeeded) == (3000, 3000, 3000)
    assert (result.failed, result.errored, result.timeout) == (0, 0, 0)
    assert result.status_2xx == 3000
    assert result.data_bytes == 3000 * len(b"hello")


async def test_h2load_posts_bodies(tmp_path: pathlib.Path) -> None:
    (tmp_path / "body.bin").write_bytes(b"x" * 20_000)
    async with serving(whoami_router(), h2_config()) as served:
        result = await h2load(
            served.url + "/echo", "-n", "1000", "-c", "4", "-m", "20",
            "-d", str(tmp_path / "body.bin"),
        )  # fmt: skip
    assert result.protocol == "h2c"
    assert (result.succeeded, result.errored, result.status_2xx) == (1000, 0, 1000)
    assert result.data_bytes == 1000 * 20_000  # every response carried the body back
