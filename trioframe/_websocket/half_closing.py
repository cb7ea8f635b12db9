"""wsproto's connection with the closing rule of RFC 6455 section 5.5.1: once the peer's Close
has been received, this end may still send data messages until it sends its own Close.

wsproto refuses every message from the moment it has read the peer's Close
(``REMOTE_CLOSING``), so a handler could not answer the messages that arrived just before
that Close (a client that sends a few messages and its Close in one write). The server session
delays its Close reply until the handler has answered them, and sends them through this
class. Imports wsproto (the ``websocket`` extra); sans-I/O.
"""

from __future__ import annotations

from wsproto.connection import Connection, ConnectionState
from wsproto.events import Event, Message
from wsproto.utilities import LocalProtocolError

__all__ = ["HalfClosingConnection"]


class HalfClosingConnection(Connection):
    """A wsproto ``Connection`` that also sends data messages in ``REMOTE_CLOSING``: the peer
    has closed its side, this side has not yet answered. Pings, pongs and anything after this
    side's Close are refused as wsproto refuses them (``LocalProtocolError``). Relies on
    wsproto 1.x's frame layer (``_proto``) for the frame, as ``Connection.send`` itself does
    in ``OPEN``."""

    def send(self, event: Event) -> bytes:
        if isinstance(event, Message) and self.state is ConnectionState.REMOTE_CLOSING:
            return bytes(self._proto.send_data(event.data, event.message_finished))
        return super().send(event)

    def send_message(self, data: str | bytes) -> bytearray:
        """The frame of a whole text (``str``) or binary message: what ``send`` returns for a
        ``TextMessage`` or ``BytesMessage`` event, without building the event."""
        if self.state is ConnectionState.OPEN or self.state is ConnectionState.REMOTE_CLOSING:
            return self._proto.send_data(data, True)
        raise LocalProtocolError(f"a message cannot be sent in state {self.state}")
