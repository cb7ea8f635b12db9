"""The frames of the common case, read and written without wsproto's frame machinery: whole,
unfragmented text and binary messages, on a connection without extensions.

``read_whole_messages`` takes one read of a client's bytes and returns its messages only when
the read is nothing but such frames, each whole and each within the size limit; for anything
else (a control frame, a fragment, a frame cut by the end of the read, bad UTF-8, a length
wsproto would refuse, a frame over the limit) it returns ``None`` and the caller hands the
same bytes to wsproto, which reads them as it always does, errors included. ``frame_message``
writes the server's frame of a whole message, byte for byte what wsproto writes.
``tests/websocket/test_frames_differential.py`` holds both to wsproto. Sans-I/O; no imports
of trio or wsproto.
"""

from __future__ import annotations

from .messages import Binary, Message, Text

__all__ = ["frame_message", "read_whole_messages"]

_FIN_TEXT = 0x81  # FIN set, no reserved bit, opcode 1
_FIN_BINARY = 0x82  # FIN set, no reserved bit, opcode 2
_MASKED = 0x80
_SHORT_MAX = 125  # the longest payload whose length fits the first length byte
_TWO_BYTE = 126  # the length byte saying a 16-bit length follows


def read_whole_messages(data: bytes, limit: int, most: int) -> list[Message] | None:
    """The messages in ``data`` (one read from a client) when it holds only whole, masked,
    unfragmented text or binary frames of at most ``limit`` bytes each, with 7- or 16-bit
    lengths, and at most ``most`` of them (a read of many tiny frames is not made into a list
    of them all); ``None`` otherwise (nothing is consumed: wsproto reads ``data`` instead)."""
    messages: list[Message] = []
    end = len(data)
    at = 0
    while at < end:
        # 6 bytes: the header and the mask of the smallest frame
        if end - at < 6 or len(messages) == most:
            return None
        first, second = data[at], data[at + 1]
        if (first != _FIN_TEXT and first != _FIN_BINARY) or not second & _MASKED:
            return None
        length = second & 0x7F
        at += 2
        if length == _TWO_BYTE:
            length = int.from_bytes(data[at : at + 2], "big")
            at += 2
            if length <= _SHORT_MAX:  # a longer length field than needed: wsproto refuses it
                return None
        elif length > _TWO_BYTE:  # a 64-bit length: never whole in one read here
            return None
        payload_at = at + 4
        at = payload_at + length
        if at > end or length > limit:
            return None
        payload = _unmask(data[payload_at:at], data[payload_at - 4 : payload_at])
        if first == _FIN_TEXT:
            try:
                messages.append(Text(payload.decode()))
            except UnicodeDecodeError:
                return None
        else:
            messages.append(Binary(payload))
    return messages


def _unmask(payload: bytes, mask: bytes) -> bytes:
    """``payload`` XORed with the 4-byte ``mask`` repeated (RFC 6455 section 5.3)."""
    size = len(payload)
    if not size:
        return b""
    key = (mask * (size // 4 + 1))[:size]
    masked = int.from_bytes(payload, "little") ^ int.from_bytes(key, "little")
    return masked.to_bytes(size, "little")


def frame_message(data: str | bytes) -> bytes:
    """The server's frame (unmasked, no extension) of the whole message ``data``: text for a
    ``str``, binary for ``bytes``."""
    if isinstance(data, str):
        payload, first = data.encode(), _FIN_TEXT
    else:
        payload, first = data, _FIN_BINARY
    size = len(payload)
    if size <= _SHORT_MAX:
        return bytes((first, size)) + payload
    if size < 0x10000:
        return bytes((first, _TWO_BYTE)) + size.to_bytes(2, "big") + payload
    return bytes((first, 127)) + size.to_bytes(8, "big") + payload
