"""wsproto's connection with the closing rule of RFC 6455 section 5.5.1: once the peer's Close
has been received, this end may still send data messages until it sends its own Close.

wsproto refuses every message from the moment it has read the peer's Close
(``REMOTE_CLOSING``), so a handler could not answer the messages that arrived just before
that Close (a client that sends a few messages and its Close in one write). The server session
delays its Close reply until the handler has answered them, and sends them through this
class. The class also reads and writes the frames of whole data messages without wsproto's
frame machinery where the connection allows it (``frames.py``, held to wsproto by a
differential test). Imports wsproto (the ``websocket`` extra); sans-I/O.
"""

from __future__ import annotations

from inspect import GEN_CLOSED, getgeneratorstate

from wsproto.connection import Connection, ConnectionState
from wsproto.events import Event, Message
from wsproto.utilities import LocalProtocolError

from . import messages
from .frames import frame_message, read_whole_messages

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

    def send_message(self, data: str | bytes) -> bytes | bytearray:
        """The frame of a whole text (``str``) or binary message: what ``send`` returns for a
        ``TextMessage`` or ``BytesMessage`` event, without building the event (nor, with no
        extension and no message part-sent, going through wsproto's frame writer)."""
        if self.state is ConnectionState.OPEN or self.state is ConnectionState.REMOTE_CLOSING:
            proto = self._proto
            if not proto.extensions and proto._outbound_opcode is None:
                return frame_message(data)
            return proto.send_data(data, True)
        raise LocalProtocolError(f"a message cannot be sent in state {self.state}")

    def read_messages(self, data: bytes, limit: int, most: int) -> list[messages.Message] | None:
        """The messages in ``data``, read without wsproto (``frames.read_whole_messages``),
        when the connection is open, without extension, and wsproto holds nothing of an
        earlier read (no frame or message in progress, no event pending) and has not failed
        (its frame reader, a generator, ends on a protocol error and reads nothing after);
        ``None`` otherwise or when ``data`` is not only whole data frames: then pass it to
        ``receive_data``."""
        proto = self._proto
        decoder = proto._frame_decoder
        if (
            self.state is not ConnectionState.OPEN
            or proto.extensions
            or self._events
            or decoder.header is not None
            or decoder.buffer.buffer
            or proto._message_decoder.opcode is not None
            or getgeneratorstate(proto._parse_more) == GEN_CLOSED
        ):
            return None
        return read_whole_messages(data, limit, most)
