"""The frames read and written without wsproto (``trioframe._websocket.frames``, through
``HalfClosingConnection.read_messages`` and ``send_message``), held to wsproto itself: the same
bytes give the same messages, or the fast reading declines and leaves wsproto's state as it
was; the same message gives the same frame, byte for byte."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from wsproto.connection import Connection, ConnectionType
from wsproto.events import BytesMessage, Event, TextMessage
from wsproto.extensions import PerMessageDeflate

from trioframe._websocket.frames import frame_message, read_whole_messages
from trioframe._websocket.half_closing import HalfClosingConnection
from trioframe._websocket.messages import Binary, Message, Text

from ._raw_client import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT

LIMIT = 300  # the message size limit under test: frames on both sides of it are drawn
MOST = 4  # the most messages one fast read may hold
OPCODES = [CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG, 0x3, 0xB]


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    """One client frame: mostly a whole masked text or binary frame with a minimal length,
    as browsers send them, else one with a single thing changed: any opcode (reserved ones
    too), no FIN, an RSV bit, no mask, a needlessly long length field, text that is not
    UTF-8, a size over the limit or near the 16-bit one."""
    change = draw(st.sampled_from([None] * 6 + ["opcode", "fin", "rsv", "mask", "length"]))
    opcode = draw(st.sampled_from(OPCODES if change == "opcode" else [TEXT, BINARY]))
    if opcode == TEXT and draw(st.integers(0, 5)) > 0:
        payload = draw(st.text(max_size=LIMIT // 3)).encode()
    else:
        payload = draw(st.binary(max_size=LIMIT + 20))
    if draw(st.integers(0, 9)) == 0:  # now and then a payload near the 16-bit limit
        payload = os.urandom(draw(st.sampled_from([125, 126, 65535])))
    fin = change != "fin"
    rsv = draw(st.sampled_from([0x40, 0x20, 0x10])) if change == "rsv" else 0
    masked = change != "mask"
    size = len(payload)
    length_bytes = 0 if size < 126 else 2 if size < 1 << 16 else 8  # the minimal one
    if change == "length":
        length_bytes = 8 if length_bytes == 2 else draw(st.sampled_from([2, 8]))
    marker = {0: size, 2: 126, 8: 127}[length_bytes]
    head = bytes([(0x80 if fin else 0) | rsv | opcode, (0x80 if masked else 0) | marker])
    head += size.to_bytes(length_bytes, "big") if length_bytes else b""
    if not masked:
        return head + payload
    key = draw(st.binary(min_size=4, max_size=4))
    stream = (key * (size // 4 + 1))[:size]
    body = (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(size, "big")
    return head + key + body


def whole_text(text: str) -> bytes:
    """A whole masked text frame, as a browser sends it."""
    payload = text.encode()
    key = b"\x01\x02\x03\x04"
    body = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    size = len(payload)
    if size < 126:
        return bytes([0x81, 0x80 | size]) + key + body
    return bytes([0x81, 0xFE]) + size.to_bytes(2, "big") + key + body


def as_messages(events: list[Event]) -> list[Message] | None:
    """wsproto's events as the messages they make when each is a whole data message."""
    messages: list[Message] = []
    for event in events:
        if not isinstance(event, (TextMessage, BytesMessage)):
            return None
        if not (event.frame_finished and event.message_finished):
            return None
        data = event.data
        messages.append(Text(data) if isinstance(data, str) else Binary(bytes(data)))
    return messages


def read_both(earlier: bytes, data: bytes, later: bytes) -> None:
    """Feed ``earlier`` to both connections, then ``data`` to the fast reading (wsproto when
    it declines) and to wsproto, then ``later`` to both: same messages, same events after."""
    fast = HalfClosingConnection(ConnectionType.SERVER)
    reference = Connection(ConnectionType.SERVER)
    for connection in (fast, reference):
        connection.receive_data(earlier)
        list(connection.events())
    reference.receive_data(data)
    expected = list(reference.events())
    messages = fast.read_messages(data, LIMIT, MOST)
    if messages is None:
        fast.receive_data(data)
        assert repr(list(fast.events())) == repr(expected)
    else:
        assert messages == as_messages(expected)
        assert len(messages) <= MOST
        assert all(len(getattr(m, "data", b"")) <= LIMIT for m in messages)
        text_sizes = [len(m.text.encode()) for m in messages if isinstance(m, Text)]
        assert all(size <= LIMIT for size in text_sizes)
    for connection in (fast, reference):
        if connection.state.name != "CLOSED":
            connection.receive_data(later)
    assert fast.state is reference.state
    assert repr(list(fast.events())) == repr(list(reference.events()))


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(
    earlier=st.lists(frames(), max_size=2).map(b"".join),
    chunk=st.lists(frames(), max_size=MOST + 1).map(b"".join),
    cut=st.sampled_from([0, 0, 0, 1, 2, 5, 7]),
    later=st.lists(frames(), max_size=2).map(b"".join),
)
@example(earlier=b"", chunk=whole_text("é" * 10), cut=0, later=b"")
@example(earlier=b"\x80\x80\x00\x00\x00\x00", chunk=whole_text(""), cut=0, later=b"")
@example(earlier=b"", chunk=whole_text("x" * 126), cut=0, later=whole_text("y"))
def test_reads_what_wsproto_reads_or_declines(
    earlier: bytes, chunk: bytes, cut: int, later: bytes
) -> None:
    data = chunk[: len(chunk) - cut] if cut < len(chunk) else chunk
    read_both(earlier, data, later)


@given(texts=st.lists(st.text(max_size=LIMIT // 4), min_size=1, max_size=MOST))
def test_takes_whole_text_frames(texts: list[str]) -> None:
    """The common case is read without wsproto: whole masked text frames within the limit."""
    data = b"".join(whole_text(text) for text in texts)
    assert read_whole_messages(data, LIMIT, MOST) == [Text(text) for text in texts]
    read_both(b"", data, b"")


@pytest.mark.parametrize(
    "data",
    [
        bytes([0x81, 0xFE, 0, 3]) + b"\0\0\0\0abc",  # a 16-bit length for 3 bytes
        bytes([0x81, 0xFF, 0, 0, 0, 0, 0, 0, 0, 3]) + b"\0\0\0\0abc",  # a 64-bit one
        bytes([0x82, 0x03]) + b"abc" + bytes([0x82, 0x80, 0, 0]),  # not masked
        bytes([0x01, 0x83]) + b"\0\0\0\0abc",  # no FIN: a fragment
        bytes([0xC1, 0x83]) + b"\0\0\0\0abc",  # RSV1 without an extension
        bytes([0x89, 0x83]) + b"\0\0\0\0abc",  # a ping
        bytes([0x81, 0x82]) + b"\0\0\0\0\xc3\x28",  # not UTF-8
        bytes([0x82, 0xFE, 0x01, 0x2D]) + b"\0\0\0\0" + b"x" * (LIMIT + 1),  # over the limit
        whole_text("abc")[:-1],  # cut short
    ],
)
def test_declines_what_wsproto_must_read(data: bytes) -> None:
    assert read_whole_messages(data, LIMIT, MOST) is None
    read_both(b"", data, whole_text("after"))


def test_declines_more_frames_than_allowed_in_one_read() -> None:
    data = whole_text("a") * (MOST + 1)
    assert read_whole_messages(data, LIMIT, MOST) is None
    read_both(b"", data, b"")


def test_declines_while_wsproto_holds_part_of_a_frame() -> None:
    connection = HalfClosingConnection(ConnectionType.SERVER)
    frame = whole_text("hello")
    connection.receive_data(frame[:3])
    assert list(connection.events()) == []
    assert connection.read_messages(frame[3:] + whole_text("x"), LIMIT, MOST) is None


def test_declines_with_an_extension() -> None:
    deflate = PerMessageDeflate()
    deflate.finalize("permessage-deflate")
    connection = HalfClosingConnection(ConnectionType.SERVER, [deflate])
    assert connection.read_messages(whole_text("hello"), LIMIT, MOST) is None


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    data=st.one_of(
        st.text(max_size=200),
        st.binary(max_size=200),
        st.sampled_from([125, 126, 127, 65535, 65536]).map(os.urandom),
        st.sampled_from([125, 126, 65535, 65536]).map(lambda n: "x" * n),
    )
)
def test_writes_what_wsproto_writes(data: str | bytes) -> None:
    reference = Connection(ConnectionType.SERVER)
    event = TextMessage(data=data) if isinstance(data, str) else BytesMessage(data=data)
    expected = reference.send(event)
    assert frame_message(data) == expected
    assert bytes(HalfClosingConnection(ConnectionType.SERVER).send_message(data)) == expected


def test_writes_through_wsproto_with_an_extension() -> None:
    def connection(kind: type[Connection]) -> Connection:
        deflate = PerMessageDeflate()
        deflate.finalize("permessage-deflate")
        return kind(ConnectionType.SERVER, [deflate])

    fast = connection(HalfClosingConnection)
    assert isinstance(fast, HalfClosingConnection)
    expected = connection(Connection).send(TextMessage(data="hello hello hello"))
    assert bytes(fast.send_message("hello hello hello")) == expected
