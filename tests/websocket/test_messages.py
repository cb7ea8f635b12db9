"""WebSocket message kinds and ``match`` support."""

from __future__ import annotations

import pytest

from trioframe._websocket import Message


def describe(message: Message) -> str:
    match message:
        case Message.Text(text):
            return f"text {text}"
        case Message.Binary(data):
            return f"binary {len(data)}"
        case Message.Ping(data):
            return f"ping {data!r}"
        case Message.Pong():
            return "pong"
        case Message.Close(code, reason):
            return f"close {code} {reason}"
    return "unknown"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (Message.Text("hi"), "text hi"),
        (Message.Binary(b"\x00\x01"), "binary 2"),
        (Message.Ping(b"p"), "ping b'p'"),
        (Message.Pong(), "pong"),
        (Message.Close(1001, "going away"), "close 1001 going away"),
        (Message.Close(), "close 1000 "),
    ],
)
def test_match_statement_support(message: Message, expected: str) -> None:
    assert describe(message) == expected


def test_messages_are_frozen_values() -> None:
    assert Message.Text("a") == Message.Text("a")
    assert isinstance(Message.Close(), Message)
    with pytest.raises(AttributeError):
        Message.Text("a").text = "b"  # type: ignore[misc]
