"""Data messages put back together from the pieces wsproto hands over, under the message
size limit. Imports wsproto's events (the ``websocket`` extra); sans-I/O."""

from __future__ import annotations

from wsproto.events import BytesMessage, TextMessage

from .messages import Binary, Message, Text

__all__ = ["MessageAssembler", "MessageTooLarge"]


class MessageTooLarge(Exception):
    """A data message over the size limit: the connection fails with 1009."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"message larger than {limit} bytes")


class MessageAssembler:
    """The data message in progress on one connection, at most ``limit`` bytes."""

    __slots__ = ("_pieces", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pieces = bytearray()  # a message that came in pieces, so far (text as UTF-8)

    def add(self, event: TextMessage | BytesMessage) -> Message | None:
        """Add a piece of a data message; the whole message once its last piece is in.
        Raises ``MessageTooLarge`` when the message so far is over the limit.

        A message that arrives whole (the usual case) is taken as wsproto hands it over; text
        is not encoded to be measured while even 4 UTF-8 bytes per character stay within the
        limit. The pieces of any other message go into one buffer, text encoded to UTF-8, so
        that its memory follows its size in bytes however many pieces it comes in (a flood of
        empty continuation frames adds nothing)."""
        limit = self.limit
        data = event.data
        if event.message_finished and not self._pieces:
            if isinstance(data, str):
                if 4 * len(data) > limit and len(data.encode()) > limit:
                    raise MessageTooLarge(limit)
                return Text(data)
            if len(data) > limit:
                raise MessageTooLarge(limit)
            return Binary(bytes(data))
        piece = data.encode() if isinstance(data, str) else data
        if len(self._pieces) + len(piece) > limit:
            raise MessageTooLarge(limit)
        self._pieces += piece
        if not event.message_finished:
            return None
        whole, self._pieces = self._pieces, bytearray()
        return Text(whole.decode()) if type(event) is TextMessage else Binary(bytes(whole))
