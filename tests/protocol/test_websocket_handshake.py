"""The WebSocket opening handshake helpers (sans-I/O, synchronous)."""

from __future__ import annotations

import pytest

from trioframe._protocol.errors import ProtocolError
from trioframe._protocol.websocket import (
    accept_headers,
    accept_token,
    choose_subprotocol,
    is_websocket_upgrade,
    read_handshake,
)

KEY = b"dGhlIHNhbXBsZSBub25jZQ=="  # the sample nonce of RFC 6455 section 1.3
UPGRADE = [
    (b"host", b"example.com"),
    (b"upgrade", b"websocket"),
    (b"connection", b"keep-alive, Upgrade"),
    (b"sec-websocket-key", KEY),
    (b"sec-websocket-version", b"13"),
]


def test_the_rfc_sample_accept_token() -> None:
    assert accept_token(KEY.decode()) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_recognising_an_upgrade() -> None:
    assert is_websocket_upgrade(b"GET", UPGRADE)
    assert is_websocket_upgrade(b"GET", [(b"upgrade", b"WebSocket"), (b"connection", b"upgrade")])
    assert not is_websocket_upgrade(b"POST", UPGRADE)
    assert not is_websocket_upgrade(b"GET", [(b"upgrade", b"websocket")])
    assert not is_websocket_upgrade(b"GET", [(b"upgrade", b"h2c"), (b"connection", b"upgrade")])


def test_a_valid_handshake() -> None:
    headers = [
        *UPGRADE,
        (b"sec-websocket-protocol", b"chat, superchat"),
        (b"origin", b"https://app.example"),
    ]
    handshake = read_handshake(headers)
    assert handshake.key == KEY.decode()
    assert handshake.subprotocols == ("chat", "superchat")
    assert handshake.origin == "https://app.example"
    assert accept_headers(handshake, "chat") == [
        (b"upgrade", b"websocket"),
        (b"connection", b"Upgrade"),
        (b"sec-websocket-accept", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        (b"sec-websocket-protocol", b"chat"),
    ]


def test_an_extended_connect_handshake_has_no_key_and_no_key_answer() -> None:
    # RFC 8441 section 5: over HTTP/2 neither Sec-WebSocket-Key nor -Accept is used, and
    # Upgrade/Connection cannot be sent
    headers = [(b"sec-websocket-version", b"13"), (b"sec-websocket-protocol", b"chat")]
    handshake = read_handshake(headers, extended_connect=True)
    assert handshake.key is None
    assert accept_headers(handshake, "chat") == [(b"sec-websocket-protocol", b"chat")]
    with pytest.raises(ProtocolError) as info:
        read_handshake([(b"sec-websocket-version", b"12")], extended_connect=True)
    assert info.value.status == 426


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({b"sec-websocket-version": b"8"}, 426),
        ({b"sec-websocket-version": None}, 426),
        ({b"sec-websocket-key": None}, 400),
        ({b"sec-websocket-key": b"not base64!"}, 400),
        ({b"sec-websocket-key": b"c2hvcnQ="}, 400),  # decodes to 5 bytes, not 16
    ],
)
def test_broken_handshakes(change: dict[bytes, bytes | None], status: int) -> None:
    headers = [(k, v) for k, v in UPGRADE if k not in change]
    headers += [(k, v) for k, v in change.items() if v is not None]
    with pytest.raises(ProtocolError) as info:
        read_handshake(headers)
    assert info.value.status == status


def test_subprotocol_choice_follows_the_route_order() -> None:
    assert choose_subprotocol(["superchat", "chat"], ["chat", "superchat"]) == "chat"
    assert choose_subprotocol(["other"], ["chat"]) is None
    assert choose_subprotocol([], ["chat"]) is None
