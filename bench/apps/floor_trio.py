"""The floor: trio sockets and nothing else, no HTTP parsing at all.

Per connection, one task reads until the end of a request's head (``\\r\\n\\r\\n``), takes the
target from the request line, skips a body of ``Content-Length`` bytes if the head has one,
and writes a response prepared at start-up (for ``/echo``, a prepared head and the body it
read). It checks nothing and handles nothing else: not a server, only what the cheapest
keep-alive request/response loop costs on trio, the figure that `bench/instructions.py`
sets every real server against.

Usage: python bench/apps/floor_trio.py PORT   (binds 127.0.0.1; SIGINT/SIGTERM stop it, exit 0)
"""

from __future__ import annotations

import json
import signal
import sys
from functools import partial

import trio

RECEIVE_SIZE = 64 * 1024
END_OF_HEAD = b"\r\n\r\n"


def response(content_type: bytes, body: bytes) -> bytes:
    """A whole HTTP/1.1 200 response with a Content-Length."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n"
    return head % (content_type, len(body)) + body


PREPARED = {
    b"/plaintext": response(b"text/plain; charset=utf-8", b"Hello, World!"),
    b"/json": response(b"application/json", json.dumps({"message": "Hello, World!"}).encode()),
    b"/users/42": response(b"application/json", json.dumps({"id": 42, "name": "user42"}).encode()),
}
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
ECHO_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: %d\r\n\r\n"
)


def body_length(head: bytes) -> int:
    """The Content-Length of a request head, 0 when it has none."""
    start = head.lower().find(b"\r\ncontent-length:")
    if start < 0:
        return 0
    end = head.find(b"\r\n", start + 2)
    return int(head[start + 17 : end if end >= 0 else len(head)])


async def handle(stream: trio.SocketStream) -> None:
    buffer = b""
    try:
        while True:
            while (end := buffer.find(END_OF_HEAD)) < 0:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    return
                buffer += data
            head, buffer = buffer[:end], buffer[end + 4 :]
            size = body_length(head)
            while len(buffer) < size:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    return
                buffer += data
            body, buffer = buffer[:size], buffer[size:]
            target = head.split(b" ", 2)[1]
            if target == b"/echo":
                await stream.send_all(ECHO_HEAD % len(body) + body)
            else:
                await stream.send_all(PREPARED.get(target, NOT_FOUND))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await stream.aclose()


async def main(port: int) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(trio.serve_tcp, handle, port, host="127.0.0.1"))
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]))
