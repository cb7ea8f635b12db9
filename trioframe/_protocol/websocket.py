"""The WebSocket opening handshake (RFC 6455 section 4), sans-I/O.

Recognising an upgrade request, validating it, choosing a subprotocol and building the
``101 Switching Protocols`` headers. Frames after the handshake belong to wsproto; this module
only decides whether and how to switch. Nothing here imports trio.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Sequence

import attrs

from .errors import ProtocolError

__all__ = [
    "Handshake",
    "accept_headers",
    "accept_token",
    "choose_subprotocol",
    "is_websocket_upgrade",
    "read_handshake",
]

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3
SUPPORTED_VERSION = "13"


def _tokens(values: Iterable[str]) -> list[str]:
    return [t.strip().lower() for value in values for t in value.split(",") if t.strip()]


def _values(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in headers if k == name]


def is_websocket_upgrade(method: bytes, headers: Sequence[tuple[bytes, bytes]]) -> bool:
    """True for a ``GET`` asking to upgrade to ``websocket`` (``Upgrade`` and ``Connection:
    upgrade`` tokens, case-insensitive)."""
    return (
        method == b"GET"
        and "websocket" in _tokens(_values(headers, b"upgrade"))
        and "upgrade" in _tokens(_values(headers, b"connection"))
    )


@attrs.frozen
class Handshake:
    """What the client asked for: its key (``None`` over HTTP/2, where RFC 8441 uses none),
    the subprotocols it offers (in its order), the extensions it offers (raw), and its
    ``Origin`` (``None`` when absent)."""

    key: str | None
    subprotocols: tuple[str, ...]
    extensions: tuple[str, ...]
    origin: str | None


def read_handshake(
    headers: Sequence[tuple[bytes, bytes]], *, extended_connect: bool = False
) -> Handshake:
    """Validate an upgrade request's headers. An unsupported ``Sec-WebSocket-Version`` is a
    426 (the answer names version 13); a missing or malformed key is a 400.
    ``extended_connect``: an HTTP/2 extended CONNECT (RFC 8441 section 5), which carries no
    key."""
    versions = _values(headers, b"sec-websocket-version")
    if [v.strip() for v in versions] != [SUPPORTED_VERSION]:
        raise ProtocolError(426, "unsupported WebSocket version (13 is supported)")
    key = None if extended_connect else _read_key(headers)
    protocols = tuple(
        t.strip() for v in _values(headers, b"sec-websocket-protocol") for t in v.split(",")
    )
    origins = _values(headers, b"origin")
    return Handshake(
        key=key,
        subprotocols=tuple(p for p in protocols if p),
        extensions=tuple(_values(headers, b"sec-websocket-extensions")),
        origin=origins[0] if origins else None,
    )


def _read_key(headers: Sequence[tuple[bytes, bytes]]) -> str:
    keys = _values(headers, b"sec-websocket-key")
    if len(keys) != 1:
        raise ProtocolError(400, "WebSocket upgrade without one Sec-WebSocket-Key")
    key = keys[0].strip()
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            raise ValueError
    except (ValueError, binascii.Error):
        raise ProtocolError(400, "malformed Sec-WebSocket-Key") from None
    return key


def accept_token(key: str) -> str:
    """``Sec-WebSocket-Accept`` for a client key: base64(SHA-1(key + GUID))."""
    digest = hashlib.sha1(key.encode("ascii") + _GUID, usedforsecurity=False).digest()
    return base64.b64encode(digest).decode("ascii")


def choose_subprotocol(offered: Sequence[str], supported: Sequence[str]) -> str | None:
    """The first of the route's ``supported`` subprotocols that the client ``offered``."""
    return next((protocol for protocol in supported if protocol in offered), None)


def accept_headers(handshake: Handshake, subprotocol: str | None) -> list[tuple[bytes, bytes]]:
    """The headers of the answer: ``101 Switching Protocols`` over HTTP/1.1, the ``200`` to an
    extended CONNECT over HTTP/2 (no key, so no ``Sec-WebSocket-Accept``, and no hop-by-hop
    ``Upgrade``/``Connection``)."""
    headers = []
    if handshake.key is not None:
        headers += [
            (b"upgrade", b"websocket"),
            (b"connection", b"Upgrade"),
            (b"sec-websocket-accept", accept_token(handshake.key).encode("ascii")),
        ]
    if subprotocol is not None:
        headers.append((b"sec-websocket-protocol", subprotocol.encode("latin-1")))
    return headers
