"""The WebSocket echo app on trioframe, for the Autobahn conformance run and the echo bench.

Every text message goes back as text and every binary message as binary, unchanged, on ``/``
and on any other path (the Autobahn runner connects to the URL it is given, ``/`` here).

Usage: python bench/autobahn/echo_app.py PORT [--max-message-size BYTES] [--compression]
    [--ping-interval SECONDS]
(binds 127.0.0.1; SIGINT/SIGTERM stop it). ``--compression`` turns on permessage-deflate
(``websocket_compression=True``), for Autobahn's sections 12 and 13. ``--ping-interval`` sets
``websocket_ping_interval`` (default: the server's, 20 s); the conformance run raises it, as an
Autobahn case that receives an unsolicited keep-alive ping fails (the 12.x cases with 1000
fragmented messages run longer than 20 s).
"""

from __future__ import annotations

import argparse

from trioframe import Message, Router, Server, ServerConfig, WebSocketConnection

MAX_MESSAGE_SIZE = 32 * 1024 * 1024  # Autobahn's section 9 sends messages of up to 16 MiB


async def echo(ws: WebSocketConnection) -> None:
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(text)
            case Message.Binary(data):
                await ws.send_bytes(data)
            case _:
                pass  # pings are answered by the server; the iteration ends after a Close


router = Router().websocket("/", echo).websocket("/{*rest}", echo)


def config(
    max_message_size: int = MAX_MESSAGE_SIZE,
    compression: bool = False,
    ping_interval: float | None = None,
) -> ServerConfig:
    settings = ServerConfig(
        websocket_max_message_size=max_message_size, websocket_compression=compression
    )
    if ping_interval is not None:
        settings = settings.with_websocket_ping_interval(ping_interval)
    return settings


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--max-message-size", type=int, default=MAX_MESSAGE_SIZE)
    parser.add_argument("--compression", action="store_true")
    parser.add_argument("--ping-interval", type=float)
    args = parser.parse_args()
    settings = config(args.max_message_size, args.compression, args.ping_interval)
    Server(router, ("127.0.0.1", args.port), settings).run()
