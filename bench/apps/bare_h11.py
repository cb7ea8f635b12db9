"""The ceiling: the benchmark app on a bare trio + h11 loop, with no framework at all.

One task per connection, keep-alive, routing by if/elif on the request target. It is
deliberately minimal (no timeouts, no body limits, no logging): the measure of what
trio + h11 can do in one process.

Usage: python bench/apps/bare_h11.py PORT   (binds 127.0.0.1; SIGINT/SIGTERM stop it, exit 0)
"""

from __future__ import annotations

import json
import signal
import sys
from functools import partial

import h11
import trio

RECEIVE_SIZE = 64 * 1024


def route(method: bytes, target: bytes, body: bytes) -> tuple[int, bytes, bytes]:
    """Return (status, content type, body) for one request."""
    if method == b"GET" and target == b"/plaintext":
        return 200, b"text/plain; charset=utf-8", b"Hello, World!"
    if method == b"GET" and target == b"/json":
        return 200, b"application/json", json.dumps({"message": "Hello, World!"}).encode()
    if method == b"GET" and target.startswith(b"/users/") and target[7:].isdigit():
        uid = int(target[7:])
        return 200, b"application/json", json.dumps({"id": uid, "name": f"user{uid}"}).encode()
    if method == b"POST" and target == b"/echo":
        return 200, b"application/octet-stream", body
    return 404, b"text/plain; charset=utf-8", b"Not Found"


async def next_event(conn: h11.Connection, stream: trio.SocketStream) -> object:
    while (event := conn.next_event()) is h11.NEED_DATA:
        conn.receive_data(await stream.receive_some(RECEIVE_SIZE))
    return event


def response_bytes(conn: h11.Connection, status: int, content_type: bytes, body: bytes) -> bytes:
    headers = [(b"content-type", content_type), (b"content-length", b"%d" % len(body))]
    data = conn.send(h11.Response(status_code=status, headers=headers)) or b""
    if body:
        data += conn.send(h11.Data(data=body)) or b""
    return data + (conn.send(h11.EndOfMessage()) or b"")


async def handle(stream: trio.SocketStream) -> None:
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            request = await next_event(conn, stream)
            if not isinstance(request, h11.Request):
                return  # ConnectionClosed: the client is done with this connection
            body = bytearray()
            while not isinstance(event := await next_event(conn, stream), h11.EndOfMessage):
                if isinstance(event, h11.Data):
                    body += event.data
            status, content_type, payload = route(request.method, request.target, bytes(body))
            await stream.send_all(response_bytes(conn, status, content_type, payload))
            if conn.our_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()
    except h11.RemoteProtocolError:
        if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            await stream.send_all(response_bytes(conn, 400, b"text/plain", b"Bad Request"))
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
