"""A whole response in one step (``send_whole``, with the llhttp writer's cache of encoded
heads) against the same response written in steps: finalised by ``final_headers``, then
``send_head``, ``send_data`` and ``send_end``. Same bytes, same refusals, same keep-alive
verdict, for both adapters, whether the head came from the cache or not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trioframe._http.headers import Header
from trioframe._protocol import http1_writer
from trioframe._protocol.errors import UnsendableResponse
from trioframe._protocol.finalize import body_allowed, final_headers
from trioframe._protocol.http1 import HTTP1Adapter
from trioframe._protocol.http1_base import BaseHTTP1Adapter
from trioframe._protocol.http1_llhttp import LLHTTPAdapter

DATE = b"Sun, 06 Nov 1994 08:49:37 GMT"
REQUESTS = [
    b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
    b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET / HTTP/1.0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
]
FIELDS: list[Header] = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"x-a", b"1"),
    (b"x-a", b"2"),
    (b"set-cookie", b"s=1; Path=/"),
    (b"content-length", b"2"),
    (b"Content-Length", b" 2 "),
    (b"connection", b"close"),
    (b"connection", b"keep-alive"),
    (b"transfer-encoding", b"chunked"),
    (b"bad name", b"x"),
    (b"x-b", b"bad\x01value"),
]


def _received(adapter_class: type[BaseHTTP1Adapter], request: bytes) -> BaseHTTP1Adapter:
    adapter = adapter_class()
    adapter.receive_data(request)
    adapter.next_event()
    adapter.next_event()  # the end of the body-less request
    return adapter


def _in_steps(
    adapter: BaseHTTP1Adapter, method: bytes, status: int, headers: list[Header], body: bytes
) -> tuple[object, ...]:
    try:
        data = adapter.send_head(status, final_headers(headers, status, len(body), DATE))
        if body and body_allowed(method, status):
            data += adapter.send_data(body)
        data += adapter.send_end()
    except UnsendableResponse as exc:
        return ("refused", str(exc), adapter.can_reuse)
    return (data, adapter.can_reuse)


def _whole(
    adapter: BaseHTTP1Adapter, method: bytes, status: int, headers: list[Header], body: bytes
) -> tuple[object, ...]:
    try:
        data = adapter.send_whole(method, status, headers, body, DATE)
    except UnsendableResponse as exc:
        return ("refused", str(exc), adapter.can_reuse)
    return (data, adapter.can_reuse)


@settings(max_examples=300, deadline=None)
@given(
    adapter_class=st.sampled_from([LLHTTPAdapter, HTTP1Adapter]),
    request=st.sampled_from(REQUESTS),
    status=st.sampled_from([200, 201, 204, 304, 404, 101, 999]),
    headers=st.lists(st.sampled_from(FIELDS), max_size=4),
    body=st.sampled_from([b"", b"ok", b"Hello, World!"]),
)
def test_a_whole_response_is_the_response_written_in_steps(
    adapter_class: type[BaseHTTP1Adapter],
    request: bytes,
    status: int,
    headers: list[Header],
    body: bytes,
) -> None:
    method = request.split(b" ", 1)[0]
    expected = _in_steps(_received(adapter_class, request), method, status, headers, body)
    # Twice: the first may encode the head and cache it, the second may take it from there.
    for _ in range(2):
        adapter = _received(adapter_class, request)
        assert _whole(adapter, method, status, headers, body) == expected


def test_a_cached_head_is_the_one_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1_writer, "_HEADS", {})
    headers = [(b"content-type", b"text/plain")]
    first = _received(LLHTTPAdapter, REQUESTS[0]).send_whole(b"GET", 200, headers, b"hi", DATE)
    cached = http1_writer._HEADS
    assert cached == {(200, *headers): b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"}
    http1_writer._HEADS[(200, *headers)] = b"HTTP/1.1 200 OK\r\nx-from: cache\r\n"
    second = _received(LLHTTPAdapter, REQUESTS[0]).send_whole(b"GET", 200, headers, b"hi", DATE)
    assert first.replace(b"content-type: text/plain", b"x-from: cache") == second


@pytest.mark.parametrize(
    ("request_", "status", "headers"),
    [
        (REQUESTS[1], 200, [(b"content-type", b"text/plain")]),  # HEAD
        (REQUESTS[2], 200, [(b"content-type", b"text/plain")]),  # HTTP/1.0: closes
        (REQUESTS[3], 200, [(b"content-type", b"text/plain")]),  # Connection: close
        (REQUESTS[0], 204, []),
        (REQUESTS[0], 200, [(b"content-length", b"2")]),
        (REQUESTS[0], 200, [(b"connection", b"keep-alive")]),
    ],
)
def test_only_heads_that_frame_nothing_and_keep_the_connection_are_cached(
    monkeypatch: pytest.MonkeyPatch, request_: bytes, status: int, headers: list[Header]
) -> None:
    monkeypatch.setattr(http1_writer, "_HEADS", {})
    method = request_.split(b" ", 1)[0]
    _received(LLHTTPAdapter, request_).send_whole(method, status, headers, b"ok", DATE)
    assert http1_writer._HEADS == {}


def test_the_head_cache_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1_writer, "_HEADS", {})
    for number in range(http1_writer._MAX_HEADS + 3):
        headers = [(b"x-n", b"%d" % number)]
        _received(LLHTTPAdapter, REQUESTS[0]).send_whole(b"GET", 200, headers, b"", DATE)
    assert len(http1_writer._HEADS) == 3
