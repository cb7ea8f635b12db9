"""The peer: an echo server on trio-websocket's own server (``serve_websocket``), no framework.

Every text message goes back as text and every binary message as binary, unchanged, on any
path. Used by ``bench/websocket.py`` as the baseline and by ``conformance.py --server
trio-websocket`` as a reference run of the Autobahn cases.

Usage: python bench/autobahn/trio_websocket_echo.py PORT [--max-message-size BYTES]
(binds 127.0.0.1; SIGINT/SIGTERM stop it, exit 0)
"""

from __future__ import annotations

import argparse
import signal
from functools import partial

import trio
from trio_websocket import ConnectionClosed, WebSocketRequest, serve_websocket

MAX_MESSAGE_SIZE = 32 * 1024 * 1024  # Autobahn's section 9 sends messages of up to 16 MiB


async def echo(request: WebSocketRequest) -> None:
    ws = await request.accept()
    try:
        while True:
            await ws.send_message(await ws.get_message())
    except ConnectionClosed:
        pass


async def main(port: int, max_message_size: int) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            serve = partial(serve_websocket, echo, "127.0.0.1", port, None)
            nursery.start_soon(partial(serve, max_message_size=max_message_size))
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--max-message-size", type=int, default=MAX_MESSAGE_SIZE)
    args = parser.parse_args()
    trio.run(main, args.port, args.max_message_size)
