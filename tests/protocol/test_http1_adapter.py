"""The HTTP/1.1 adapters (h11's and llhttp's): bytes in, events out (sans-I/O, synchronous).
Every test of the shared behaviour runs on both adapters."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe._protocol import head as head_module
from trioframe._protocol import http1 as http1_module
from trioframe._protocol.errors import ProtocolError, UnsendableResponse
from trioframe._protocol.head import HeadLimits
from trioframe._protocol.http1 import HTTP1Adapter, render_simple_response
from trioframe._protocol.http1_base import (
    CLOSED,
    NEED_DATA,
    PAUSED,
    BaseHTTP1Adapter,
    BodyChunk,
    BodyEnd,
)
from trioframe._protocol.http1_llhttp import LLHTTPAdapter
from trioframe._protocol.request_head import RequestHead

AdapterClass = type[BaseHTTP1Adapter]


@pytest.fixture(params=[HTTP1Adapter, LLHTTPAdapter], ids=["h11", "llhttp"])
def Adapter(request: pytest.FixtureRequest) -> AdapterClass:
    adapter_class: AdapterClass = request.param
    return adapter_class


def events(adapter: BaseHTTP1Adapter) -> list[object]:
    out: list[object] = []
    while True:
        event = adapter.next_event()
        out.append(event)
        if event in (NEED_DATA, PAUSED, CLOSED):
            return out


def respond(adapter: BaseHTTP1Adapter, body: bytes = b"ok") -> bytes:
    data = adapter.send_head(200, [(b"content-length", b"%d" % len(body))])
    data += adapter.send_data(body) + adapter.send_end()
    return data


def test_get_request_then_keep_alive(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    head, end, paused = events(adapter)
    assert isinstance(head, RequestHead)
    assert (head.method, head.target, head.version) == (b"GET", b"/a?b=1", "1.1")
    assert head.content_length is None and not head.chunked
    assert end == BodyEnd() and paused is PAUSED
    assert respond(adapter).startswith(b"HTTP/1.1 200 OK\r\n")
    assert adapter.can_reuse
    adapter.start_next_cycle()
    assert adapter.idle
    assert adapter.next_event() is NEED_DATA


def test_body_split_across_reads(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
    assert isinstance(adapter.next_event(), RequestHead)
    assert adapter.next_event() == BodyChunk(b"ab")
    assert adapter.next_event() is NEED_DATA
    adapter.receive_data(b"cde")
    assert adapter.next_event() == BodyChunk(b"cde")
    assert adapter.next_event() == BodyEnd()


def test_a_body_that_has_all_arrived_is_taken_whole_with_its_end(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
        b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert isinstance(adapter.next_event(), RequestHead)
    assert adapter.take_whole_body() == b"abc"
    assert not adapter.in_body and adapter.next_event() is PAUSED
    respond(adapter)
    assert adapter.can_reuse
    adapter.start_next_cycle()
    head = adapter.next_event()  # the pipelined request is untouched
    assert isinstance(head, RequestHead) and head.target == b"/2"


def test_the_rest_of_a_body_is_taken_whole_once_it_has_arrived(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
    assert isinstance(adapter.next_event(), RequestHead)
    assert adapter.take_whole_body() is None  # 2 of 5 bytes: not yet
    assert adapter.in_body
    assert adapter.next_event() == BodyChunk(b"ab")
    adapter.receive_data(b"cd")
    assert adapter.take_whole_body() is None  # 4 of 5
    adapter.receive_data(b"e")
    assert adapter.take_whole_body() == b"cde"
    assert not adapter.in_body


@pytest.mark.parametrize(
    ("request_bytes", "expected"),
    [
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            None,
        ),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", b""),
    ],
    ids=["chunked: never", "empty"],
)
def test_what_take_whole_body_gives(
    Adapter: AdapterClass, request_bytes: bytes, expected: bytes | None
) -> None:
    adapter = Adapter()
    adapter.receive_data(request_bytes)
    assert isinstance(adapter.next_event(), RequestHead)
    assert adapter.take_whole_body() == expected
    assert adapter.in_body is (expected is None)


def test_no_body_is_taken_between_requests(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    assert adapter.take_whole_body() is None
    adapter.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    events(adapter)
    assert adapter.take_whole_body() is None


def test_pipelined_requests_after_a_fixed_length_body_stay_checked(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
        b"GET /2 HTTP/1.1\r\nHost: x\r\nX: \x01\r\n\r\n"
    )
    assert events(adapter)[:3] == [adapter._head, BodyChunk(b"abc"), BodyEnd()]
    respond(adapter)
    adapter.start_next_cycle()
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 400


def test_pipelined_request_after_a_chunked_body(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n0\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    got = events(adapter)
    assert got[1:] == [BodyChunk(b"abc"), BodyEnd(), PAUSED]
    respond(adapter)
    adapter.start_next_cycle()
    head = adapter.next_event()
    assert isinstance(head, RequestHead) and head.target == b"/2"


def test_empty_lines_before_a_request_are_ignored(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert isinstance(adapter.next_event(), RequestHead)


def test_eof_between_requests_is_closed_and_inside_a_head_is_an_error(
    Adapter: AdapterClass,
) -> None:
    adapter = Adapter()
    adapter.receive_data(b"")
    assert adapter.next_event() is CLOSED
    adapter = Adapter()
    adapter.receive_data(b"GET / HT")
    adapter.receive_data(b"")
    with pytest.raises(ProtocolError):
        adapter.next_event()


def test_eof_inside_a_body_is_an_error(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
    adapter.next_event()
    adapter.next_event()
    adapter.receive_data(b"")
    with pytest.raises(ProtocolError):
        adapter.next_event()


def test_h11_status_hints_become_statuses(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"GET / HTTP/1.1\r\n\r\n")  # no Host: h11 says 400
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 400
    adapter = Adapter()
    adapter.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n")
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 501


def test_head_limits_apply_in_one_read(Adapter: AdapterClass) -> None:
    adapter = Adapter(HeadLimits(max_head_size=64))
    adapter.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 64 + b"\r\n\r\n")
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 431


def test_expect_continue(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"
    )
    head = adapter.next_event()
    assert isinstance(head, RequestHead) and head.expects_continue
    assert adapter.they_expect_continue
    assert adapter.send_continue().startswith(b"HTTP/1.1 100 ")
    assert not adapter.they_expect_continue


def test_head_response_sends_no_body_framing(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    events(adapter)
    data = adapter.send_head(200, [(b"content-length", b"10")]) + adapter.send_end()
    assert data.endswith(b"content-length: 10\r\n\r\n")


def test_http10_closes_after_the_response(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"GET / HTTP/1.0\r\n\r\n")
    head = adapter.next_event()
    assert isinstance(head, RequestHead) and head.version == "1.0"
    events(adapter)
    respond(adapter)
    assert not adapter.can_reuse


def test_simple_response_never_echoes_peer_text() -> None:
    raw = render_simple_response(400, [(b"content-type", b"application/json")], b"{}")
    assert raw.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"connection: close" in raw and raw.endswith(b"\r\n\r\n{}")


SMUGGLING_SHAPES = {
    "bare LF ending the trailer section": b"0\r\n\n",
    "bare LF in a trailer field": b"0\r\nX: y\n\r\n",
    "obs-fold in the trailer": b"0\r\nX: y\r\n z\r\n\r\n",
    "control character in a trailer field": b"0\r\nX: a\x01b\r\n\r\n",
    "CR inside a chunk extension": b"3;a\rb\r\nabc\r\n0\r\n\r\n",
    "NUL inside a chunk extension": b"3;a\x00\r\nabc\r\n0\r\n\r\n",
    "DEL inside a chunk extension": b"3;a\x7f\r\nabc\r\n0\r\n\r\n",
    "space after the chunk size": b"3 \r\nabc\r\n0\r\n\r\n",
    "a hundred hex digits": b"0" * 99 + b"3\r\nabc\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("body", SMUGGLING_SHAPES.values(), ids=SMUGGLING_SHAPES.keys())
def test_lenient_chunked_framing_is_refused_before_the_next_request(
    Adapter: AdapterClass, body: bytes
) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + body
        + b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert isinstance(adapter.next_event(), RequestHead)
    with pytest.raises(ProtocolError) as info:
        while type(adapter.next_event()) is BodyChunk:
            pass
    assert info.value.status == 400


def test_h11_is_never_fed_past_a_chunked_body() -> None:
    adapter = HTTP1Adapter()
    adapter.receive_data(
        b"POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert events(adapter)[1:] == [BodyChunk(b"abc"), BodyEnd(), PAUSED]
    assert adapter._h11.trailing_data == (b"", False)
    assert adapter.buffered == len(b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")


def test_a_chunked_body_arriving_a_byte_at_a_time(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert isinstance(adapter.next_event(), RequestHead)
    got: list[object] = []
    for byte in b"3\r\nabc\r\n10\r\n" + b"d" * 16 + b"\r\n0\r\nX: y\r\n\r\nGET":
        adapter.receive_data(bytes([byte]))
        got += events(adapter)[:-1]
    assert b"".join(event.data for event in got if type(event) is BodyChunk) == b"abc" + b"d" * 16
    assert got[-1] == BodyEnd()
    assert adapter.buffered == 3


def test_eof_inside_a_chunk_size_line_is_an_error(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3")
    adapter.next_event()
    assert adapter.next_event() is NEED_DATA
    adapter.receive_data(b"")
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 400


def test_a_head_with_bare_lf_line_ends_is_refused_without_waiting(Adapter: AdapterClass) -> None:
    adapter = Adapter()
    adapter.receive_data(b"GET / HTTP/1.1\nHost: x\n\n")
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.status == 400
    assert info.value.answer


def test_a_tls_client_hello_is_refused_without_an_answer(Adapter: AdapterClass) -> None:
    for prefix in (b"", b"\r\n\r\n"):  # also after the empty lines a request may start with
        adapter = Adapter()
        adapter.receive_data(prefix + b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        with pytest.raises(ProtocolError) as info:
            adapter.next_event()
        assert not info.value.answer
    adapter = Adapter()
    adapter.receive_data(b"G\x16")  # not the first byte: an ordinary bad request head
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    assert info.value.answer and info.value.status == 400


def _head_error(Adapter: AdapterClass, data: bytes) -> ProtocolError:
    adapter = Adapter()
    adapter.receive_data(data)
    with pytest.raises(ProtocolError) as info:
        adapter.next_event()
    return info.value


def test_connect_is_refused_with_501_before_h11_can_switch_to_a_tunnel(
    Adapter: AdapterClass,
) -> None:
    error = _head_error(Adapter, b"CONNECT / HTTP/1.1\r\nHost: t\r\n\r\n")
    assert error.status == 501


@pytest.mark.parametrize(
    "host", [b"t t", b"t@u", b":t:x", b"t/x", b"[::1", b"t:80x", b"\xc3\xa9.example"]
)
def test_an_invalid_host_value_is_400(Adapter: AdapterClass, host: bytes) -> None:
    error = _head_error(Adapter, b"GET / HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert (error.status, error.message) == (400, "invalid Host header")


@pytest.mark.parametrize(
    "host", [b"t", b"example.com:8080", b"127.0.0.1", b"[::1]:443", b"a%2Db", b"", b"x:"]
)
def test_valid_host_values_pass(Adapter: AdapterClass, host: bytes) -> None:
    adapter = Adapter()
    adapter.receive_data(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert type(adapter.next_event()) is RequestHead


def test_a_host_value_that_passed_is_remembered_within_a_bound(
    Adapter: AdapterClass, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(head_module, "_VALID_HOSTS", set())
    monkeypatch.setattr(head_module, "_MAX_VALID_HOSTS", 3)
    for number in range(4):
        adapter = Adapter()
        adapter.receive_data(b"GET / HTTP/1.1\r\nHost: h%d\r\n\r\n" % number)
        assert type(adapter.next_event()) is RequestHead
    remembered = head_module._VALID_HOSTS
    assert remembered == {b"h3"}  # full at three: it started over
    # A refused value is never remembered.
    error = _head_error(Adapter, b"GET / HTTP/1.1\r\nHost: t t\r\n\r\n")
    assert error.status == 400 and b"t t" not in head_module._VALID_HOSTS


def test_http_1_2_is_read_as_1_1_and_needs_a_host(Adapter: AdapterClass) -> None:
    error = _head_error(Adapter, b"GET / HTTP/1.2\r\n\r\n")
    assert (error.status, error.message) == (400, "missing Host header")
    adapter = Adapter()
    adapter.receive_data(b"GET / HTTP/1.2\r\nHost: t\r\n\r\n")
    head = adapter.next_event()
    assert type(head) is RequestHead and head.version == "1.1"


def _request_head(Adapter: AdapterClass, data: bytes) -> RequestHead:
    adapter = Adapter()
    adapter.receive_data(data)
    head = adapter.next_event()
    assert type(head) is RequestHead
    return head


@pytest.mark.parametrize(
    ("target", "authority"),
    [
        (b"http://other.example/a?b=1", b"other.example"),
        (b"https://other.example:8443", b"other.example:8443"),
        (b"http://[::1]:80?q", b"[::1]:80"),
        (b"http://x:/", b"x:"),
    ],
)
def test_an_absolute_form_targets_authority_is_the_host(
    Adapter: AdapterClass, target: bytes, authority: bytes
) -> None:
    """RFC 9112 section 3.2.2: the Host field sent with it is ignored, the authority stands in
    its place, first; the target and the other fields are as sent."""
    data = b"GET " + target + b" HTTP/1.1\r\nAccept: */*\r\nHost: t\r\nX-A: 1\r\n\r\n"
    head = _request_head(Adapter, data)
    assert head.target == target
    assert list(head.headers) == [(b"host", authority), (b"accept", b"*/*"), (b"x-a", b"1")]


def test_an_absolute_form_target_is_the_host_of_http_1_0_without_one(Adapter: AdapterClass) -> None:
    head = _request_head(Adapter, b"GET http://other.example/ HTTP/1.0\r\nX-A: 1\r\n\r\n")
    assert list(head.headers) == [(b"host", b"other.example"), (b"x-a", b"1")]
    head = _request_head(Adapter, b"GET / HTTP/1.0\r\nX-A: 1\r\n\r\n")
    assert list(head.headers) == [(b"x-a", b"1")]  # origin-form: no Host is made up


def test_an_absolute_form_target_still_needs_a_valid_host_field_on_http_1_1(
    Adapter: AdapterClass,
) -> None:
    error = _head_error(Adapter, b"GET http://other.example/ HTTP/1.1\r\n\r\n")
    assert error.status == 400  # (h11's refusal: RFC 9112 section 3.2 asks for Host anyway)
    error = _head_error(Adapter, b"GET http://other.example/ HTTP/1.1\r\nHost: t t\r\n\r\n")
    assert (error.status, error.message) == (400, "invalid Host header")
    error = _head_error(Adapter, b"GET http://a/ HTTP/1.1\r\nHost: t\r\nHost: t\r\n\r\n")
    assert error.status == 400


# -- response header fields, validated by h11 once ----------------------------------------------
def _served_get() -> HTTP1Adapter:
    adapter = HTTP1Adapter()
    adapter.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    events(adapter)
    return adapter


def test_a_repeated_response_field_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    validated: list[object] = []
    original = http1_module.normalize_and_validate

    def counting(headers: Any) -> Any:
        validated.append(list(headers))
        return original(headers)

    monkeypatch.setattr(http1_module, "normalize_and_validate", counting)
    monkeypatch.setattr(http1_module, "_FIELDS", {})
    fields = [(b"content-type", b"text/x-once"), (b"content-length", b"2")]
    for _ in range(3):
        adapter = _served_get()
        assert b"\r\ncontent-type: text/x-once\r\n" in adapter.send_head(200, list(fields))
    assert validated == [[(b"content-type", b"text/x-once")]]


@pytest.mark.parametrize(
    "fields",
    [
        [(b"content-length", b"2"), (b"content-length", b"3")],
        [(b"content-type", b"a\x00b")],
        [(b"bad name", b"x")],
        [(b"transfer-encoding", b"gzip")],
    ],
)
def test_a_field_h11_refuses_is_refused_even_after_valid_ones(
    fields: list[tuple[bytes, bytes]],
) -> None:
    _served_get().send_head(200, [(b"content-type", b"text/plain"), (b"content-length", b"2")])
    with pytest.raises(UnsendableResponse):
        _served_get().send_head(200, [(b"content-type", b"text/plain"), *fields])


def test_the_field_cache_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1_module, "_FIELDS", {})
    for number in range(http1_module._MAX_FIELDS + 5):
        _served_get().send_head(200, [(b"x-n", b"%d" % number), (b"content-length", b"0")])
    assert len(http1_module._FIELDS) == 5


def test_without_h11s_private_header_form_responses_still_go_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An h11 whose private header form differs: no cache, h11 validates the list itself.
    monkeypatch.setattr(http1_module, "_FIELD_CACHE", False)
    monkeypatch.setattr(http1_module, "_FIELDS", {})
    head = _served_get().send_head(
        200, [(b"content-type", b"text/plain"), (b"content-length", b"2")]
    )
    assert b"\r\ncontent-type: text/plain\r\n" in head
    assert http1_module._FIELDS == {}


def test_without_h11s_private_header_form_request_fields_are_read_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-b: 2\r\n\r\n"
    heads = []
    for private_form in (True, False):
        monkeypatch.setattr(http1_module, "_FIELD_CACHE", private_form)
        adapter = HTTP1Adapter()
        adapter.receive_data(request)
        heads.append(adapter.next_event())
    assert heads[0] == heads[1]
    assert isinstance(heads[0], RequestHead)
    assert list(heads[0].headers) == [(b"host", b"x"), (b"x-a", b"1"), (b"x-b", b"2")]


@pytest.mark.parametrize(
    "fields",
    [
        [(b"content-type", b"a\x00b")],
        [(b"content-length", b"2"), (b"content-length", b"3")],
    ],
)
def test_without_h11s_private_header_form_bad_fields_are_still_refused(
    monkeypatch: pytest.MonkeyPatch, fields: list[tuple[bytes, bytes]]
) -> None:
    monkeypatch.setattr(http1_module, "_FIELD_CACHE", False)
    with pytest.raises(UnsendableResponse):
        _served_get().send_head(200, fields)


def test_a_client_waits_for_100_continue_until_it_sends_body_bytes(
    Adapter: AdapterClass,
) -> None:
    adapter = Adapter()
    adapter.receive_data(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"
    )
    assert isinstance(adapter.next_event(), RequestHead)
    assert adapter.next_event() is NEED_DATA  # nothing sent yet: still waiting
    assert adapter.they_expect_continue
    adapter.receive_data(b"a")  # it sent a byte without waiting: no longer waiting
    assert adapter.next_event() == BodyChunk(b"a")
    assert not adapter.they_expect_continue
