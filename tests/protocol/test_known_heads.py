"""The llhttp adapter's heads read before (``http1_llhttp._KNOWN_HEADS``): a head whose bytes
it has read with the same limits is not checked and parsed again. Held to the head read
anew: the same events, refusals, request, body framing, keep-alive verdict, ``100 Continue``
and upgrade facts, whatever the head (the fuzz target's generated and mutated requests, its
hostile corpus)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.http1_inputs import CORPUS, generated_requests, streams
from trioframe._protocol import http1_llhttp
from trioframe._protocol.errors import ProtocolError, UnsendableResponse
from trioframe._protocol.head import HeadLimits
from trioframe._protocol.http1_base import NEED_DATA, BodyChunk
from trioframe._protocol.http1_llhttp import LLHTTPAdapter
from trioframe._protocol.request_head import RequestHead

LIMITS = HeadLimits(max_head_size=1024, max_request_line_size=256, max_header_count=20)
GET = b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n"


def _read(data: bytes, limits: HeadLimits = LIMITS) -> list[object]:
    """What an adapter makes of ``data`` (one connection, every request answered 200 with a
    small body of unknown size): each event, refusal, and the facts the response side reads."""
    adapter = LLHTTPAdapter(limits)
    adapter.receive_data(data)
    adapter.receive_data(b"")
    seen: list[object] = []
    for _ in range(10):
        try:
            event = adapter.next_event()
            if isinstance(event, RequestHead):
                facts = (adapter._keep_alive, adapter._upgrade_proposed, adapter._unusual)
                framing = (adapter._body_left, adapter._chunked is None)
                seen.append((event, adapter.they_expect_continue, facts, framing))
                while type(event := adapter.next_event()) is BodyChunk:
                    seen.append(event)
                seen.append(event)
                if event is NEED_DATA:
                    return seen
                # A body of unknown size: chunked to an HTTP/1.1 client, to the close to 1.0.
                data = adapter.send_head(200, []) + adapter.send_data(b"ok")
                seen.append(data + adapter.send_end())
                seen.append(adapter.can_reuse)
                if not adapter.can_reuse:
                    return seen
                adapter.start_next_cycle()
            else:
                seen.append(event)
                return seen
        except (ProtocolError, UnsendableResponse) as exc:
            seen.append((type(exc).__name__, getattr(exc, "status", None)))
            return seen
    return seen


def _twice(data: bytes) -> None:
    http1_llhttp._KNOWN_HEADS.clear()
    anew = _read(data)
    assert _read(data) == anew  # (its heads known now, where they were read without fault)


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(st.lists(generated_requests(), min_size=1, max_size=3).map(b"".join), streams())
)
def test_a_known_head_is_read_as_it_was_read_anew(data: bytes) -> None:
    _twice(data)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_corpus_is_read_alike_with_its_heads_known(name: str) -> None:
    _twice(CORPUS[name])


def test_a_head_read_before_is_taken_from_the_known_heads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1_llhttp, "_KNOWN_HEADS", {})
    first = _read(GET)
    assert list(http1_llhttp._KNOWN_HEADS) == [GET]
    monkeypatch.setattr(http1_llhttp, "check_head", None)  # a known head is not checked again
    second = _read(GET)
    assert second == first
    head, again = first[0], second[0]
    assert isinstance(head, tuple) and isinstance(again, tuple)
    assert head[0] is again[0]  # one immutable value (its fields a tuple) for both requests
    assert head[0].headers == ((b"host", b"t"),)


def test_a_head_is_known_only_with_the_limits_it_was_checked_with() -> None:
    http1_llhttp._KNOWN_HEADS.clear()
    _read(GET)
    tight = HeadLimits(max_head_size=16)
    assert _read(GET, tight) == [("ProtocolError", 431)]


def test_refused_and_unusual_heads_and_large_ones_are_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http1_llhttp, "_KNOWN_HEADS", {})
    _read(b"GET /a HTTP/1.1\r\n\r\n")  # no Host: 400
    _read(b"GET /a HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n")  # judged by h11
    large = b"GET /a HTTP/1.1\r\nHost: t\r\nx-a: %s\r\n\r\n" % (b"a" * 2048)
    _read(large, HeadLimits())
    assert http1_llhttp._KNOWN_HEADS == {}


def test_the_known_heads_start_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1_llhttp, "_KNOWN_HEADS", {})
    for number in range(http1_llhttp._MAX_KNOWN_HEADS + 2):
        _read(b"GET /%d HTTP/1.1\r\nHost: t\r\n\r\n" % number)
    assert len(http1_llhttp._KNOWN_HEADS) == 2
