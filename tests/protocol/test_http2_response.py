"""A whole response queued in one step (``HTTP2Adapter.send_response``, ``http2_response``)
held to h2's own path (``send_headers``, then ``send_data``): for any client settings, stream
and response, the same bytes, the same errors and the same state after, in h2 and in the flood
account; and the client reads the responses."""

from __future__ import annotations

import string
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import pytest
from h2.errors import ErrorCodes
from h2.settings import SettingCodes
from hypothesis import event, given, settings
from hypothesis import strategies as st

from trioframe._protocol.http2 import HTTP2Adapter, HTTP2Limits
from trioframe._protocol.http2_head import MalformedHead

_HEADERS = st.lists(
    st.tuples(
        st.sampled_from([b"content-type", b"date", b"x-id", b"set-cookie", b"connection"]),
        st.text(string.ascii_letters + string.digits + "-/;=", max_size=40).map(str.encode),
    ),
    max_size=5,
)
_RESPONSE = st.tuples(
    st.integers(0, 5),  # which stream
    st.sampled_from([200, 204, 404, 101, 103]),
    _HEADERS,
    st.sampled_from([0, 1, 13, 1024, 16384, 16385, 70000]).map(lambda size: b"b" * size),
)


def _state(adapter: HTTP2Adapter) -> Any:
    machine = adapter._h2
    streams = {
        stream_id: (
            vars(stream.state_machine),
            stream.outbound_flow_control_window,
            stream.request_method,
        )
        for stream_id, stream in machine.streams.items()
    }
    return (
        streams,
        machine.state_machine.state,
        machine.outbound_flow_control_window,
        adapter.meter.work,
    )


def _respond(adapter: HTTP2Adapter, response: Any, *, whole: bool) -> tuple[str, Any]:
    stream_id, status, headers, body = response
    try:
        if whole:
            return "done", adapter.send_response(stream_id, status, headers, body, earned=True)
        adapter.send_headers(stream_id, status, headers, end=not body)
        if body:
            adapter.send_data(stream_id, body, end=True)
        adapter.response_done()  # (what the exchange does after them)
        return "done", True
    except h2.exceptions.ProtocolError as exc:
        return "error", type(exc)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([0, 100, 65535]),  # the client's initial stream window
    st.sampled_from([16384, 20000]),  # the client's max frame size
    st.sampled_from([0, 256, 4096]),  # the client's header table size
    st.lists(st.booleans(), min_size=1, max_size=5),  # streams: a GET, or a POST still open
    st.sets(st.integers(1, 5), max_size=2),  # streams the client resets
    st.lists(_RESPONSE, min_size=1, max_size=8),
)
def test_a_whole_response_is_what_h2_sends(
    window: int,
    frame_size: int,
    table: int,
    gets: list[bool],
    resets: set[int],
    responses: list[Any],
) -> None:
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    client.update_settings(
        {
            SettingCodes.INITIAL_WINDOW_SIZE: window,
            SettingCodes.MAX_FRAME_SIZE: frame_size,
            SettingCodes.HEADER_TABLE_SIZE: table,
        }
    )
    fast, slow = HTTP2Adapter(HTTP2Limits()), HTTP2Adapter(HTTP2Limits())

    def exchange() -> None:
        data = client.data_to_send()
        for adapter in (fast, slow):
            adapter.feed(data)
            while adapter.backlog:
                adapter.receive()
        out = fast.data_to_send()
        assert out == slow.data_to_send()
        client.receive_data(out)

    exchange()  # the prefaces and SETTINGS, both ways
    exchange()  # the acknowledgements
    ids = []
    for get in gets:
        stream_id = client.get_next_available_stream_id()
        headers = [(":method", "GET" if get else "POST"), (":scheme", "https")]
        headers += [(":authority", "example.org"), (":path", "/")]
        client.send_headers(stream_id, headers, end_stream=get)
        ids.append(stream_id)
    for index in resets:
        if index <= len(ids):
            client.reset_stream(ids[index - 1], ErrorCodes.CANCEL)
    exchange()
    for response in responses:
        stream_id = ids[response[0] % len(ids)]
        response = (stream_id, *response[1:])
        done = _respond(fast, response, whole=True)
        event(repr(done))  # (the run's statistics show every outcome is reached)
        if done == ("done", False):  # not taken at once: h2's path is the fallback
            assert fast.data_to_send() == b""
            continue
        assert done == _respond(slow, response, whole=False)
        assert _state(fast) == _state(slow)
        out = fast.data_to_send()
        assert out == slow.data_to_send()
        for received in client.receive_data(out):
            assert not isinstance(received, h2.events.ConnectionTerminated)
        client.data_to_send()


def test_a_response_the_windows_take_is_one_step() -> None:
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    adapter = HTTP2Adapter(HTTP2Limits())
    client.send_headers(
        1, [(":method", "GET"), (":scheme", "http"), (":authority", "a"), (":path", "/")], True
    )
    adapter.feed(client.data_to_send())
    adapter.receive()
    client.receive_data(adapter.data_to_send())
    assert adapter.send_response(1, 200, [(b"content-type", b"text/plain")], b"hi", earned=True)
    events = client.receive_data(adapter.data_to_send())
    kinds = [type(event) for event in events]
    assert kinds == [h2.events.ResponseReceived, h2.events.DataReceived, h2.events.StreamEnded]
    assert events[1].data == b"hi"
    # A second head on the stream, or a body past the window: h2's path, nothing queued
    assert not adapter.send_response(1, 200, [], b"", earned=True)
    assert adapter.data_to_send() == b""


def test_a_repeated_head_is_read_once_and_shared_immutable() -> None:
    adapter = HTTP2Adapter(HTTP2Limits())
    fields = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"a"), (b":path", b"/")]
    first = adapter._read_head([*fields, (b"x-a", b"1")])
    second = adapter._read_head([*fields, (b"x-a", b"1")])
    assert first is second and isinstance(first.headers, tuple)  # (nothing can change it)
    assert adapter._read_head([*fields, (b"x-a", b"2")]).headers[-1] == (b"x-a", b"2")


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_a_head_is_remembered_up_to_2_kib_of_fields(extra: int) -> None:
    # A connection remembers at most 16 heads of 2 KiB of fields (names and values): a
    # client sending large heads cannot make each connection hold 16 of 16 KiB.
    adapter = HTTP2Adapter(HTTP2Limits())
    fields = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"a"), (b":path", b"/")]
    size = sum(len(name) + len(value) for name, value in fields) + len(b"x-pad")
    head = [*fields, (b"x-pad", b"p" * (2048 - size + extra))]
    remembered = adapter._read_head(head) is adapter._read_head(head)
    assert remembered is (extra <= 0)
    with pytest.raises(MalformedHead):  # a malformed head is never remembered
        adapter._read_head([*fields, (b"x-a", b"1\r\n")])
    with pytest.raises(MalformedHead):
        adapter._read_head([*fields, (b"x-a", b"1\r\n")])
    for n in range(100):
        adapter._read_head([*fields, (b"x-n", b"%d" % n)])
    assert len(adapter._heads) <= 16
