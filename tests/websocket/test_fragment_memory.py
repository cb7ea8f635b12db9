"""A message's memory follows its size in bytes, not the number of frames it came in: a
message of ``websocket_max_message_size`` sent as 1-byte fragments, and a flood of empty
continuation frames, keep the session's peak memory (``tracemalloc``) within a small multiple
of the limit. Before, every fragment was kept as an object of its own (~60 bytes each for a
byte of payload) and every read's events were listed at once.

In memory over a lockstep stream pair: the client writes ``WRITE`` bytes at a time, so no read
of the server is larger than that."""

from __future__ import annotations

import tracemalloc

import pytest
import trio
import trio.testing

from trioframe import Message, Router, ServerConfig, WebSocketConnection
from trioframe.testing import TestClient

from ._raw_client import BINARY, CONTINUATION, TEXT, WsClient, frame

LIMIT = 4096
WRITE = 512
#: The peak allowed, 8 times the limit: the pieces so far, the finished message, the UTF-8
#: decoder's work space, a read, and the fixed cost of the session's tasks (~9 KiB).
BOUND = 8 * LIMIT
EURO = "€".encode()


async def sizes(ws: WebSocketConnection) -> None:
    """Answers each data message with its size in bytes and its last character (text) or
    byte value (binary)."""
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(f"{len(text.encode())} {text[-1]}")
            case Message.Binary(data):
                await ws.send_text(f"{len(data)} {data[-1]}")
            case _:
                pass


def fragmented(opcode: int, pieces: list[bytes]) -> bytes:
    """One message in ``len(pieces)`` frames."""
    last = len(pieces) - 1
    return b"".join(
        frame(opcode if index == 0 else CONTINUATION, piece, fin=index == last)
        for index, piece in enumerate(pieces)
    )


CASES = [
    pytest.param(
        fragmented(BINARY, [b"a"] * LIMIT), f"{LIMIT} 97", id="binary-limit-in-1-byte-frames"
    ),
    pytest.param(  # every character split across three frames
        fragmented(TEXT, [bytes([byte]) for byte in EURO * (LIMIT // 3)]),
        f"{LIMIT // 3 * 3} €",
        id="text-limit-in-1-byte-frames",
    ),
    pytest.param(
        fragmented(BINARY, [b"a", *[b""] * LIMIT, b"b"]),
        "2 98",
        id="binary-empty-continuation-flood",
    ),
    pytest.param(
        fragmented(TEXT, [b"a", *[b""] * LIMIT, b"b"]),
        "2 b",
        id="text-empty-continuation-flood",
    ),
]


@pytest.mark.parametrize(("data", "answer"), CASES)
async def test_peak_memory_does_not_depend_on_fragmentation(data: bytes, answer: str) -> None:
    config = ServerConfig(websocket_max_message_size=LIMIT, websocket_ping_interval=600.0)
    writes = [data[start : start + WRITE] for start in range(0, len(data), WRITE)]
    test_client = TestClient(Router().websocket("/ws", sizes), config)
    with trio.fail_after(30):
        async with test_client, trio.open_nursery() as nursery:
            client_end, server_end = trio.testing.lockstep_stream_pair()
            nursery.start_soon(test_client.server.handle_stream, server_end, ("127.0.0.1", 9))
            client = WsClient(client_end)
            await client.upgrade("testserver", "/ws")
            await client.send(fragmented(TEXT, [b"warm", b"up"]))  # first-use costs, untraced
            assert (await client.read_frame()).payload == b"6 p"
            tracemalloc.start()
            try:
                for write in writes:
                    await client.send(write)
                reply = await client.read_frame()
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert reply.payload.decode() == answer
            assert peak < BOUND, f"peak {peak} bytes = {peak / LIMIT:.1f} x the limit"
            await client.send(frame(TEXT, b"ok"))  # the next message starts afresh
            assert (await client.read_frame()).payload == b"2 k"
            nursery.cancel_scope.cancel()


def in_pieces(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


@pytest.mark.parametrize("opcode", [BINARY, TEXT])
@pytest.mark.parametrize("size", [LIMIT - 1, LIMIT, LIMIT + 1])
async def test_the_limit_counts_the_bytes_of_all_fragments(opcode: int, size: int) -> None:
    """100-byte fragments (a text message's 3-byte characters split across them) add up to
    ``size`` bytes: accepted up to the limit, 1009 one byte past it."""
    text = "€" * (size // 3) + "a" * (size % 3)
    data = (
        text.encode() if opcode == TEXT else bytes(range(256)) * (size // 256) + b"a" * (size % 256)
    )
    assert len(data) == size
    config = ServerConfig(websocket_max_message_size=LIMIT, websocket_ping_interval=600.0)
    test_client = TestClient(Router().websocket("/ws", sizes), config)
    with trio.fail_after(30):
        async with test_client, trio.open_nursery() as nursery:
            client_end, server_end = trio.testing.memory_stream_pair()
            nursery.start_soon(test_client.server.handle_stream, server_end, ("127.0.0.1", 9))
            client = WsClient(client_end)
            await client.upgrade("testserver", "/ws")
            await client.send(fragmented(opcode, in_pieces(data, 100)))
            if size > LIMIT:
                await client.expect_failure(1009)
            else:
                reply = await client.read_frame()
                last = text[-1] if opcode == TEXT else data[-1]
                assert reply.payload.decode() == f"{size} {last}"
            nursery.cancel_scope.cancel()
