"""The server's own metrics, driven through the real server where the test client cannot go:
loopback sockets for TLS, the connection limit, slow bodies and shutdown; in-memory HTTP/2
connections (``tests/http2/support.py``) for a flood and a malformed request."""

from __future__ import annotations

import pathlib
from collections.abc import Awaitable, Callable

import httpx
import pytest
import trio
import trio.testing

from tests.http2.support import (
    ENHANCE_YOUR_CALM,
    HEADERS,
    RawPeer,
    connect,
    data_frame,
    frame,
    h2_config,
    h2_server,
    ping,
    request_fields,
    settings_frame,
    well_behaved,
)
from tests.loopback._support import (
    RawConnection,
    Served,
    assert_error_body,
    fetch,
    serving,
    simple_get,
)
from tests.tls._support import make_certificates
from trioframe import Request, Response, Router, Server, ServerConfig

from ._scrape import Scrape, scrape_server

pytestmark = pytest.mark.loopback


async def hello() -> Response:
    return Response.text("hello")


async def upload(request: Request) -> Response:
    return Response.text(f"{len(await request.read_body())} bytes")


ROUTER = Router().get("/", hello).post("/upload", upload).metrics()


async def eventually(
    read: Callable[[], Awaitable[Scrape]], done: Callable[[Scrape], bool]
) -> Scrape:
    """Scrape until ``done`` holds (what the server counts after the client has its answer
    may take a few more scheduler steps); fails after 10 seconds."""
    with trio.fail_after(10):
        while True:
            page = await read()
            if done(page):
                return page
            await trio.sleep(0.01)


def scraper(served: Served, **client: object) -> Callable[[], Awaitable[Scrape]]:
    scheme = "https" if "verify" in client else "http"

    async def read() -> Scrape:
        async with httpx.AsyncClient(**client) as http:  # type: ignore[arg-type]
            response = await http.get(f"{scheme}://127.0.0.1:{served.port}/metrics")
        assert response.status_code == 200
        return Scrape(response.text)

    return read


async def test_failed_and_timed_out_tls_handshakes(tmp_path: pathlib.Path) -> None:
    certs = make_certificates(tmp_path)
    config = ServerConfig(tls_handshake_timeout=0.3).with_tls(certs.server_file, certs.server_file)
    async with serving(ROUTER, config) as served:
        read = scraper(served, verify=certs.client_context())
        broken = await trio.open_tcp_stream(served.host, served.port)
        await broken.send_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")  # not TLS
        silent = await trio.open_tcp_stream(served.host, served.port)  # says nothing
        failures = "trioframe_tls_handshake_failures_total"
        page = await eventually(read, lambda p: p.value(failures, reason="timeout") == 1)
        assert page.value(failures, reason="error") == 1
        assert page.requests(http_route="/metrics") >= 1  # the scrapes got through
        await broken.aclose()
        await silent.aclose()


#: only the connection limit may close anything in the eviction tests
ONE_SLOT = ServerConfig(max_connections=1, header_timeout=60.0, keep_alive_timeout=60.0)


async def idle(served: Served) -> RawConnection:
    connection = await RawConnection.open(served.host, served.port)
    await connection.send(simple_get("/"))
    assert (await connection.read_response()).status == 200  # then waits for the next one
    return connection


async def half_a_head(served: Served) -> RawConnection:
    connection = await RawConnection.open(served.host, served.port)
    await connection.send(b"GET / HTTP/1.1\r\nHost: loc")
    return connection


async def nothing_yet(served: Served) -> RawConnection:
    return await RawConnection.open(served.host, served.port)  # HTTP/2 on: sniffed first


@pytest.mark.parametrize(
    ("state", "hold", "config"),
    [
        ("idle", idle, ONE_SLOT),
        ("head", half_a_head, ONE_SLOT),
        ("opening", nothing_yet, ONE_SLOT.with_http2(True)),
    ],
)
async def test_evictions_by_what_the_connection_was_waiting_for(
    state: str, hold: Callable[[Served], Awaitable[RawConnection]], config: ServerConfig
) -> None:
    async with serving(ROUTER, config) as served:
        holder = await hold(served)
        with trio.fail_after(10):
            page = await scraper(served)()  # the holder makes room for it
        assert page.value("trioframe_connections_evicted_total", state=state) == 1
        assert page.value("trioframe_connections_evicted_total") == 1
        await holder.aclose()


async def test_a_body_too_slow_is_a_408_of_its_route() -> None:
    async with serving(ROUTER, ServerConfig(body_timeout=0.3)) as served:
        head = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        response, connection = await fetch(served.host, served.port, head + b"only ten..")
        assert_error_body(response, 408)
        await connection.aclose()
        page = await eventually(scraper(served), lambda p: p.requests(http_route="/upload") == 1)
    assert page.requests(http_route="/upload", http_response_status_code="408") == 1
    size = "http_server_request_body_size_bytes_sum"
    assert page.value(size, http_route="/upload") == 100  # as declared


async def test_a_request_cut_off_at_shutdown_is_a_503_and_counted() -> None:
    entered = trio.Event()

    async def stuck() -> Response:
        entered.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    router = Router().get("/stuck", stuck).metrics()
    server = Server(router, "127.0.0.1:0", ServerConfig(shutdown_timeout=0.3))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            [(host, port)] = await nursery.start(server.serve)
            busy = await RawConnection.open(host, port)
            await busy.send(simple_get("/stuck"))
            partial = await RawConnection.open(host, port)
            await partial.send(b"GET /stuck HTTP/1.1\r\nHost: lo")  # a head never finished
            await entered.wait()
            await trio.testing.wait_all_tasks_blocked()  # (the partial head has been read)
            server.shutdown()
            assert_error_body(await busy.read_response(), 503)
            assert_error_body(await partial.read_response(), 503)
    page = scrape_server(server)
    assert page.value("trioframe_requests_refused_at_shutdown_total") == 2
    assert page.requests(http_route="/stuck", http_response_status_code="503") == 1
    assert page.value("http_server_active_requests") == 0
    assert page.value("trioframe_open_connections") == 0


async def test_an_http2_flood_goaway_and_a_refused_head() -> None:
    # (no MockClock: the scrape waits for a worker thread, which an autojump clock skips)
    config = h2_config(http2_flood_allowance=20)
    async with h2_server(ROUTER, config) as (server, nursery):
        good = await well_behaved(server, nursery)
        flooder = await connect(server, nursery)
        await flooder.send(b"".join(ping(b"%08d" % i) for i in range(200)))
        await flooder.closed()
        assert [g.error_code for g in flooder.goaways] == [ENHANCE_YOUR_CALM]
        malformed = await connect(server, nursery)
        fields = request_fields(b"GET", b"/", [(b"Upper-Case", b"x")])
        await malformed.send(malformed.headers_frame(1, fields))
        assert (await malformed.response(1)).status == 400
        page = Scrape((await good.request(b"GET", b"/metrics")).body.decode())
    assert page.value("trioframe_http2_error_goaways_total", reason="flood") == 1
    assert page.value("trioframe_http2_error_goaways_total") == 1
    assert page.value("trioframe_open_connections", protocol="h2") == 2  # good and malformed
    assert page.value("trioframe_connections_total", protocol="h2") == 3
    assert page.requests(http_request_method="GET", http_response_status_code="400") == 1


async def frame_too_large(peer: RawPeer) -> None:
    await peer.send(data_frame(1, b"x" * 16385)[:9])  # refused from its header


async def invalid_setting(peer: RawPeer) -> None:
    await peer.send(settings_frame({0x2: 2}))  # ENABLE_PUSH is 0 or 1: h2 refuses it


async def header_block_never_finished(peer: RawPeer) -> None:
    block = peer.block(request_fields(b"GET", b"/"))
    await peer.send(frame(HEADERS, 0x1, 1, block[:5]))  # no END_HEADERS, no CONTINUATION


@pytest.mark.parametrize(
    ("reason", "misbehave"),
    [
        ("frame_too_large", frame_too_large),
        ("protocol_error", invalid_setting),
        ("slow_header_block", header_block_never_finished),
    ],
)
async def test_http2_error_goaways_by_reason(
    reason: str,
    misbehave: Callable[[RawPeer], Awaitable[None]],
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(ROUTER, h2_config(header_timeout=5)) as (server, nursery):
        peer = await connect(server, nursery)
        await misbehave(peer)
        await peer.closed()
        assert peer.goaways and peer.goaways[-1].error_code != 0
        # read directly: a scrape waits for a thread, which a mock clock's jumps skip
        page = scrape_server(server)
    assert page.value("trioframe_http2_error_goaways_total", reason=reason) == 1
    assert page.value("trioframe_http2_error_goaways_total") == 1


async def test_metrics_off_count_nothing() -> None:
    server = Server(Router().get("/", hello), "127.0.0.1:0")
    async with trio.open_nursery() as nursery:
        [(host, port)] = await nursery.start(server.serve)
        response, connection = await fetch(host, port, simple_get("/"))
        assert response.status == 200
        await connection.aclose()
        server.shutdown()
    assert server._state is not None and server._state.app.observer is None
