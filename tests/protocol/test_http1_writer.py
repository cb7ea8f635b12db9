"""The llhttp adapter's own response writer (``http1_writer.ResponseWriter``) against h11's:
for every combination of request (method, version, ``Connection``) and response (status,
framing headers, body), both adapters must write the same framing (``Content-Length``,
``Transfer-Encoding``, ``Connection: close``), the same body bytes on the wire, the same
keep-alive verdict, and refuse the same responses."""

from __future__ import annotations

import itertools

import pytest

from trioframe._http.headers import Header
from trioframe._protocol.errors import ProtocolError, UnsendableResponse
from trioframe._protocol.http1 import HTTP1Adapter
from trioframe._protocol.http1_base import BaseHTTP1Adapter, BodyEnd
from trioframe._protocol.http1_llhttp import LLHTTPAdapter
from trioframe._protocol.request_head import RequestHead

REQUESTS = {
    "GET 1.1": b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
    "HEAD 1.1": b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET 1.0": b"GET / HTTP/1.0\r\n\r\n",
    "HEAD 1.0": b"HEAD / HTTP/1.0\r\n\r\n",
    "GET 1.1 close": b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    "GET 1.0 keep-alive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
}
STATUSES = [200, 204, 304, 404]
HEADER_SETS: dict[str, list[Header]] = {
    "length": [(b"content-type", b"text/plain"), (b"content-length", b"2")],
    "no length": [(b"content-type", b"text/plain")],
    "chunked": [(b"transfer-encoding", b"chunked")],
    "Chunked and a length": [(b"Transfer-Encoding", b"Chunked"), (b"content-length", b"2")],
    "close": [(b"content-length", b"2"), (b"connection", b"close")],
    "keep-alive": [(b"content-length", b"2"), (b"Connection", b"keep-alive")],
    "two equal lengths": [(b"content-length", b"2"), (b"Content-Length", b"2")],
}
BODIES = [[b"ok"], [b"o", b"k"], [], [b""]]


def _received(
    adapter_class: type[BaseHTTP1Adapter], request: bytes
) -> tuple[BaseHTTP1Adapter, object, object]:
    """An adapter that has read ``request`` (body-less): it, and the two events it gave."""
    adapter = adapter_class()
    adapter.receive_data(request)
    head = adapter.next_event()
    end = adapter.next_event()
    return adapter, head, end


def _serve(
    adapter_class: type[BaseHTTP1Adapter],
    request: bytes,
    status: int,
    headers: list[Header],
    body: list[bytes],
) -> tuple[object, ...]:
    adapter, head_event, end_event = _received(adapter_class, request)
    assert isinstance(head_event, RequestHead)
    assert end_event == BodyEnd()
    try:
        head = adapter.send_head(status, list(headers))
    except UnsendableResponse:
        return ("refused at the head",)
    wire = b""
    try:
        for piece in body:
            wire += adapter.send_data(piece)
        wire += adapter.send_end()
    except UnsendableResponse:
        return ("refused in the body", _framing(head))
    return (_framing(head), wire, adapter.can_reuse)


def _framing(head: bytes) -> tuple[object, ...]:
    lines = head.split(b"\r\n")
    fields: dict[bytes, list[bytes]] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(b":")
            fields.setdefault(name.lower(), []).append(value.strip().lower())
    connection = sorted(
        part.strip() for value in fields.get(b"connection", []) for part in value.split(b",")
    )
    return (
        lines[0],
        sorted(set(fields.get(b"content-length", []))),
        fields.get(b"transfer-encoding", []),
        "close" in [c.decode() for c in connection],
    )


CASES = list(itertools.product(REQUESTS, STATUSES, HEADER_SETS, range(len(BODIES))))


@pytest.mark.parametrize(("request_name", "status", "header_set", "body_index"), CASES)
def test_the_llhttp_writer_frames_as_h11_does(
    request_name: str, status: int, header_set: str, body_index: int
) -> None:
    request, headers, body = REQUESTS[request_name], HEADER_SETS[header_set], BODIES[body_index]
    by_h11 = _serve(HTTP1Adapter, request, status, headers, body)
    by_llhttp = _serve(LLHTTPAdapter, request, status, headers, body)
    assert by_llhttp == by_h11


REFUSED: dict[str, tuple[int, list[Header]]] = {
    "a 1xx final response": (103, [(b"content-length", b"0")]),
    "a name with a space": (200, [(b"bad name", b"x")]),
    "a value with a NUL": (200, [(b"x", b"a\x00b")]),
    "a value with leading space": (200, [(b"x", b" a")]),
    "gzip": (200, [(b"transfer-encoding", b"gzip")]),
    "two codings": (200, [(b"transfer-encoding", b"chunked"), (b"transfer-encoding", b"chunked")]),
    "conflicting lengths": (200, [(b"content-length", b"2"), (b"content-length", b"3")]),
    "a list of lengths": (200, [(b"content-length", b"2, 3")]),
    "a 21-digit length": (200, [(b"content-length", b"1" * 21)]),
    "a signed length": (200, [(b"content-length", b"+2")]),
}


@pytest.mark.parametrize("case", REFUSED)
def test_both_writers_refuse_the_same_heads(case: str) -> None:
    status, headers = REFUSED[case]
    for adapter_class in (HTTP1Adapter, LLHTTPAdapter):
        assert _serve(adapter_class, REQUESTS["GET 1.1"], status, headers, [b"ok"]) == (
            "refused at the head",
        ), adapter_class.__name__


def test_after_a_refusal_neither_adapter_reuses_the_connection() -> None:
    for adapter_class in (HTTP1Adapter, LLHTTPAdapter):
        adapter, _, _ = _received(adapter_class, REQUESTS["GET 1.1"])
        with pytest.raises(UnsendableResponse):
            adapter.send_head(200, [(b"content-length", b"2")])
            adapter.send_data(b"toolong")
        assert not adapter.can_reuse


def test_a_switch_needs_an_upgrade_proposal_on_both() -> None:
    upgrade = b"GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    for adapter_class in (HTTP1Adapter, LLHTTPAdapter):
        plain, _, _ = _received(adapter_class, REQUESTS["GET 1.1"])
        with pytest.raises(ProtocolError):
            plain.send_switch([(b"upgrade", b"websocket")])
        asked, _, _ = _received(adapter_class, upgrade + b"after")
        head = asked.send_switch([(b"upgrade", b"websocket"), (b"connection", b"Upgrade")])
        assert head.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
        assert not asked.can_reuse
        assert asked.take_buffered() == b"after"
