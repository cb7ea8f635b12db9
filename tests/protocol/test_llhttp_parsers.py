"""The llhttp adapter's parsers: shared between connections (a head is parsed whole, in one
synchronous step), each put back ready for another message."""

from __future__ import annotations

import httptools
import pytest

from trioframe._protocol import http1_llhttp
from trioframe._protocol.http1_llhttp import LLHTTPAdapter
from trioframe._protocol.request_head import RequestHead


def test_llhttp_parsers_are_shared_between_connections_not_held_by_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[object] = []
    original = httptools.HttpRequestParser

    def counted(protocol: object) -> object:
        made.append(protocol)
        return original(protocol)

    monkeypatch.setattr(http1_llhttp, "_IDLE_READERS", [])
    monkeypatch.setattr(http1_llhttp.httptools, "HttpRequestParser", counted)
    adapters = [LLHTTPAdapter() for _ in range(3)]
    assert made == []  # an adapter holds no parser of its own
    for _ in range(2):
        for adapter in adapters:
            adapter.receive_data(b"GET / HTTP/1.1\r\nHost: a\r\nX-Tag: %d\r\n\r\n" % id(adapter))
            head = adapter.next_event()
            assert isinstance(head, RequestHead)
            assert (b"x-tag", b"%d" % id(adapter)) in head.headers
            adapter.next_event()  # its end
            adapter.start_next_cycle()
    assert len(made) == 1  # one parser read all six heads, one after the other


@pytest.mark.parametrize(
    ("head", "reused"),
    [
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", True),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n", False),  # body next
        (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", False),  # no more
        (b"GET / HTTP/1.0\r\nHost: a\r\n\r\n", False),  # no more (HTTP/1.0)
        (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n", False),
    ],
)
def test_an_llhttp_parser_left_mid_message_is_replaced(
    monkeypatch: pytest.MonkeyPatch, head: bytes, reused: bool
) -> None:
    reader = http1_llhttp._HeadReader()
    parser = reader.parser
    monkeypatch.setattr(http1_llhttp, "_IDLE_READERS", [reader])
    adapter = LLHTTPAdapter()
    adapter.receive_data(head)
    assert isinstance(adapter.next_event(), RequestHead)
    assert len(http1_llhttp._IDLE_READERS) == 1
    assert http1_llhttp._IDLE_READERS[0] is reader
    assert (reader.parser is parser) is reused
