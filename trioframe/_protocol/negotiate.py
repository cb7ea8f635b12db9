"""Protocol negotiation: which sans-I/O adapter serves a new connection.

The inputs are what a server knows before the first request: the ALPN protocol TLS agreed on
(``None`` on cleartext) and, on cleartext, the first bytes the client sent (an HTTP/2
client with prior knowledge opens with the connection preface). HTTP/2 is chosen only when
the server enables it.
"""

from __future__ import annotations

import enum

__all__ = ["H2_PREFACE", "Protocol", "choose_protocol", "needs_more_bytes"]

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Protocol(enum.Enum):
    """The adapter a connection runs."""

    HTTP1 = "http/1.1"
    HTTP2 = "h2"


def needs_more_bytes(first_bytes: bytes, *, http2_enabled: bool) -> bool:
    """True while ``first_bytes`` could still be the start of the HTTP/2 preface."""
    return (
        http2_enabled and len(first_bytes) < len(H2_PREFACE) and H2_PREFACE.startswith(first_bytes)
    )


def choose_protocol(alpn: str | None, first_bytes: bytes, *, http2_enabled: bool) -> Protocol:
    """Pick the adapter: ALPN ``h2`` or the HTTP/2 preface (when enabled) → HTTP/2, anything
    else → HTTP/1.1 (whose parser answers a stray preface with 505)."""
    if not http2_enabled:
        return Protocol.HTTP1
    if alpn == "h2" or (alpn is None and first_bytes.startswith(H2_PREFACE)):
        return Protocol.HTTP2
    return Protocol.HTTP1
