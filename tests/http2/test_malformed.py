"""Malformed request heads and bodies (RFC 9113 section 8.1.1): each answers its own stream
only (400, 431 or 501 with the standard JSON error body, or RST_STREAM(PROTOCOL_ERROR) for a
body that breaks its Content-Length), and the connection goes on serving."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from tests.http2.lab import Lab, router
from tests.http2.support import (
    PROTOCOL_ERROR,
    Header,
    RawPeer,
    connect,
    data_frame,
    h2_server,
    request_fields,
)
from trioframe._http.url import Uri

GET = request_fields(b"GET", b"/")


def without(name: bytes) -> list[Header]:
    return [(n, v) for n, v in GET if n != name]


MALFORMED: dict[str, tuple[list[Header], int, str]] = {
    "upper-case name": ([*GET, (b"X-Upper", b"1")], 400, "invalid header field name"),
    "space in name": ([*GET, (b"x upper", b"1")], 400, "invalid header field name"),
    "CR LF in value": ([*GET, (b"x-a", b"1\r\nx-b: 2")], 400, "invalid header field value"),
    "connection": ([*GET, (b"connection", b"keep-alive")], 400, "connection-specific"),
    "transfer-encoding": ([*GET, (b"transfer-encoding", b"chunked")], 400, "connection-specific"),
    "upgrade": ([*GET, (b"upgrade", b"h2c")], 400, "connection-specific"),
    "keep-alive": ([*GET, (b"keep-alive", b"timeout=5")], 400, "connection-specific"),
    "proxy-connection": ([*GET, (b"proxy-connection", b"x")], 400, "connection-specific"),
    "te: gzip": ([*GET, (b"te", b"gzip")], 400, "connection-specific"),
    "no :method": (without(b":method"), 400, "without :method"),
    "empty :method": ([(b":method", b""), *without(b":method")], 400, "invalid :method"),
    "space in :method": ([(b":method", b"G T"), *without(b":method")], 400, "invalid :method"),
    "non-ASCII :method": ([(b":method", b"G\x80T"), *without(b":method")], 400, "invalid :method"),
    "no :path": (without(b":path"), 400, "without :scheme or :path"),
    "empty :path": ([*without(b":path"), (b":path", b"")], 400, "without :scheme or :path"),
    "no :scheme": (without(b":scheme"), 400, "without :scheme or :path"),
    "pseudo after regular": (
        [*without(b":path"), (b"x-a", b"1"), (b":path", b"/")],
        400,
        "pseudo-header field after a regular field",
    ),
    "repeated pseudo": ([*GET[:3], (b":path", b"/"), (b":path", b"/")], 400, "repeated"),
    "unknown pseudo": ([*GET, (b":foo", b"1")], 400, "unknown or response pseudo"),
    "response pseudo": ([(b":status", b"200"), *GET], 400, "unknown or response pseudo"),
    ":path not absolute": ([*without(b":path"), (b":path", b"index.html")], 400, "absolute"),
    "fragment in :path": ([*without(b":path"), (b":path", b"/#top")], 400, "fragment"),
    "%00 in the :path": ([*without(b":path"), (b":path", b"/a%00")], 400, "NUL"),
    "%00 in a query value": ([*without(b":path"), (b":path", b"/?q=%00")], 400, "NUL"),
    "non-ASCII :path": ([*without(b":path"), (b":path", b"/caf\xc3\xa9")], 400, "characters"),
    "space in :path": ([*without(b":path"), (b":path", b"/a b")], 400, "characters"),
    "Host differs": ([*GET, (b"host", b"other.test")], 400, "Host and :authority differ"),
    "two Hosts": ([*without(b":authority"), (b"host", b"a"), (b"host", b"b")], 400, "Host"),
    ":protocol without CONNECT": ([*GET, (b":protocol", b"websocket")], 400, ":protocol"),
    "plain CONNECT": (
        [(b":method", b"CONNECT"), (b":authority", b"example.test:443")],
        501,
        "CONNECT is not supported",
    ),
}


#: Heads h2 itself refuses (it parses Content-Length while it decodes the block): the stream
#: is reset with PROTOCOL_ERROR, the stream error RFC 9113 section 8.1.1 names.
RESET: dict[str, list[Header]] = {
    "non-numeric content-length": [*GET, (b"content-length", b"12a")],
    "negative content-length": [*GET, (b"content-length", b"-1")],
    "two content-lengths": [*GET, (b"content-length", b"1"), (b"content-length", b"2")],
}


async def served_after(peer: RawPeer, stream_id: int) -> None:
    """The connection still serves a new stream and has not been given up."""
    await peer.request(stream_id, b"POST", b"/echo", body=b"still here")
    result = await peer.response(stream_id)
    assert (result.status, bytes(result.body)) == (200, b"still here")
    assert peer.goaways == []


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_a_malformed_head_answers_its_stream_only(
    case: str, autojump_clock: trio.testing.MockClock
) -> None:
    fields, status, message = MALFORMED[case]
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(peer.headers_frame(1, fields))
        result = await peer.response(1)
        assert result.status == status
        assert result.header(b"content-type") == b"application/json"
        body = json.loads(result.body)
        assert set(body) == {"status", "error", "message"}
        assert body["status"] == status
        assert message in body["message"]
        await served_after(peer, 3)


@pytest.mark.parametrize("case", list(RESET))
async def test_a_head_h2_refuses_resets_its_stream_only(
    case: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(peer.headers_frame(1, RESET[case]))
        result = await peer.response(1)
        assert (result.headers, result.reset) == (None, PROTOCOL_ERROR)
        await served_after(peer, 3)


async def test_a_malformed_head_with_a_body_to_come_is_answered_and_the_body_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        fields = request_fields(b"POST", b"/echo", [(b"Bad", b"1")])
        await peer.send(peer.headers_frame(1, fields, end_stream=False))
        await peer.send_body(1, b"x" * 60_000)  # within the windows
        result = await peer.response(1)
        assert result.status == 400
        await served_after(peer, 3)


async def test_te_trailers_is_allowed(autojump_clock: trio.testing.MockClock) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, headers=[(b"te", b"trailers")])
        assert (await peer.response(1)).status == 200


@pytest.mark.parametrize(
    ("declared", "sent"), [(5, b"123456"), (5, b"1234"), (0, b"1"), (100_000, b"x" * 99_999)]
)
async def test_a_body_that_breaks_its_content_length_resets_its_stream(
    declared: int, sent: bytes, autojump_clock: trio.testing.MockClock
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        headers = [(b"content-length", b"%d" % declared)]
        await peer.request(1, b"POST", b"/echo", headers, body=sent)
        result = await peer.response(1)
        assert result.reset == PROTOCOL_ERROR
        assert result.headers is None
        await served_after(peer, 3)


async def test_a_body_matching_its_content_length_is_served(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.request(1, b"POST", b"/echo", [(b"content-length", b"5")], body=b"12345")
        result = await peer.response(1)
        assert (result.status, bytes(result.body)) == (200, b"12345")


async def test_malformed_heads_interleaved_with_good_streams(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        for i, (fields, status, _) in enumerate(MALFORMED.values()):
            bad, good = 4 * i + 1, 4 * i + 3
            await peer.send(peer.headers_frame(bad, fields))
            await peer.request(good, b"POST", b"/echo", body=b"%d" % i, end=False)
            await peer.send(data_frame(good, b"!", end=True))
            assert (await peer.response(bad)).status == status
            assert bytes((await peer.response(good)).body) == b"%d!" % i
        assert peer.goaways == []


async def test_a_request_that_cannot_be_built_fails_its_stream_only(
    monkeypatch: pytest.MonkeyPatch,
    autojump_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failure while the server builds the ``Request`` (a bug: the head was checked) is
    answered 500 on that stream and logged; the connection's other streams go on."""
    parse = Uri.parse

    def failing(target: str) -> Uri:
        if target.startswith("/boom"):
            raise RuntimeError("injected")
        return parse(target)

    monkeypatch.setattr(Uri, "parse", staticmethod(failing))
    async with h2_server(router(Lab())) as (server, nursery):
        peer = await connect(server, nursery)
        await peer.send(peer.headers_frame(1, request_fields(b"GET", b"/boom")))
        result = await peer.response(1)
        assert result.status == 500
        await served_after(peer, 3)
    assert "cannot build the request for b'/boom'" in caplog.text
