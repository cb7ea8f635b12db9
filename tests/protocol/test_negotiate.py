"""Choosing a connection's protocol adapter (sans-I/O)."""

from __future__ import annotations

from trioframe._protocol.negotiate import (
    H2_PREFACE,
    Protocol,
    choose_protocol,
    needs_more_bytes,
)


def test_http1_unless_http2_is_enabled() -> None:
    assert choose_protocol("h2", H2_PREFACE, http2_enabled=False) is Protocol.HTTP1
    assert choose_protocol(None, b"GET / HTTP/1.1\r\n", http2_enabled=True) is Protocol.HTTP1


def test_alpn_and_prior_knowledge_pick_http2() -> None:
    assert choose_protocol("h2", b"", http2_enabled=True) is Protocol.HTTP2
    assert choose_protocol(None, H2_PREFACE + b"\x00", http2_enabled=True) is Protocol.HTTP2
    assert choose_protocol("http/1.1", H2_PREFACE, http2_enabled=True) is Protocol.HTTP1


def test_waiting_for_the_preface() -> None:
    assert needs_more_bytes(b"PRI * HT", http2_enabled=True)
    assert not needs_more_bytes(b"GET ", http2_enabled=True)
    assert not needs_more_bytes(b"PRI * HT", http2_enabled=False)
    assert not needs_more_bytes(H2_PREFACE, http2_enabled=True)
