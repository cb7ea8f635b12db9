"""``Message`` and its kinds, as a handler receives them from ``WebSocketConnection.recv``.

Each kind is a frozen attrs class whose positional fields support ``match``::

    match message:
        case Message.Text(text): ...
        case Message.Close(code, reason): ...
"""

from __future__ import annotations

from typing import ClassVar

import attrs

__all__ = ["Binary", "Close", "Message", "Ping", "Pong", "Text"]


class Message:
    """Base of the WebSocket message kinds; the kinds are also reachable as attributes
    (``Message.Text``, ``Message.Binary``, ``Message.Ping``, ``Message.Pong``,
    ``Message.Close``)."""

    __slots__ = ()

    Text: ClassVar[type[Text]]
    Binary: ClassVar[type[Binary]]
    Ping: ClassVar[type[Ping]]
    Pong: ClassVar[type[Pong]]
    Close: ClassVar[type[Close]]


@attrs.frozen
class Text(Message):
    """A complete text message."""

    text: str


@attrs.frozen
class Binary(Message):
    """A complete binary message."""

    data: bytes


@attrs.frozen
class Ping(Message):
    """A ping from the peer (already answered with a pong when delivered)."""

    data: bytes = b""


@attrs.frozen
class Pong(Message):
    """A pong from the peer."""

    data: bytes = b""


@attrs.frozen
class Close(Message):
    """The peer closed (``1006`` with an empty reason when the connection dropped)."""

    code: int = 1000
    reason: str = ""


Message.Text = Text
Message.Binary = Binary
Message.Ping = Ping
Message.Pong = Pong
Message.Close = Close
