"""permessage-deflate (RFC 7692) for the server: negotiation, and wsproto's extension with
decompression capped by the message size limit.

wsproto inflates each received frame in one call with no output limit, so a small
compressed frame could expand to gigabytes in memory. :class:`CappedDeflate` inflates at
most one byte past ``websocket_max_message_size`` per message and then fails the connection
with 1009. Imports wsproto (the ``websocket`` extra); sans-I/O.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import CloseReason

__all__ = ["CappedDeflate", "negotiate_deflate"]


class CappedDeflate(PerMessageDeflate):
    """``PerMessageDeflate`` whose inflated output per message stops at ``max_message_size``
    (the frame then fails with ``MESSAGE_TOO_BIG``, 1009). Relies on wsproto 1.x's private
    state of the current message (``_inbound_compressed``, ``_decompressor``)."""

    def __init__(self, max_message_size: int) -> None:
        super().__init__()
        self.max_message_size = max_message_size
        self._inflated = 0  # bytes inflated so far for the current message

    def frame_inbound_payload_data(self, proto: Any, data: bytes) -> bytes | CloseReason:
        if not self._inbound_compressed or not self._inbound_is_compressible:
            return data
        assert self._decompressor is not None
        budget = self.max_message_size - self._inflated + 1
        try:
            inflated = self._decompressor.decompress(bytes(data), budget)
        except zlib.error:
            return CloseReason.INVALID_FRAME_PAYLOAD_DATA
        self._inflated += len(inflated)
        if self._inflated > self.max_message_size:
            return CloseReason.MESSAGE_TOO_BIG
        return inflated

    def frame_inbound_complete(self, proto: Any, fin: bool) -> bytes | CloseReason | None:
        result = super().frame_inbound_complete(proto, fin)
        if isinstance(result, bytes):
            self._inflated += len(result)
            if self._inflated > self.max_message_size:
                return CloseReason.MESSAGE_TOO_BIG
        if fin:
            self._inflated = 0
        return result


def negotiate_deflate(offers: Iterable[str], max_message_size: int) -> tuple[list[Any], str | None]:
    """Accept the client's first usable permessage-deflate offer. Returns the extensions to
    hand to wsproto and the ``Sec-WebSocket-Extensions`` answer (``([], None)`` when nothing
    was offered or nothing offered can be accepted)."""
    for header in offers:
        for offer in header.split(","):
            if offer.split(";", 1)[0].strip() != PerMessageDeflate.name:
                continue
            extension = CappedDeflate(max_message_size)
            try:
                parameters = extension.accept(offer.strip())
            except ValueError:  # a malformed parameter value: try the next offer
                continue
            if parameters is None or parameters is False:
                continue
            answer = (
                extension.name if parameters in (True, "") else f"{extension.name}; {parameters}"
            )
            return [extension], answer
    return [], None
