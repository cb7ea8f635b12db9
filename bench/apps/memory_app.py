"""The app bench/memory.py measures: the benchmark app's routes plus a WebSocket echo, with
the limits raised so that thousands of idle connections stay open.

Usage: python bench/apps/memory_app.py PORT --max-connections N [--http2]
(binds 127.0.0.1; SIGINT/SIGTERM stop it). The keep-alive timeout and the WebSocket ping
interval are raised to 600 s, so the server neither closes an idle connection nor pings one
(an idle client never answers) while it is being measured. ``--http2`` serves h2c with prior
knowledge as well as HTTP/1.1 on the same port.
"""

from __future__ import annotations

import argparse

from trioframe_app import router as http_router

from trioframe import Message, Server, ServerConfig, WebSocketConnection

IDLE_SECONDS = 600.0


async def echo(ws: WebSocketConnection) -> None:
    async for message in ws:
        match message:
            case Message.Text(text):
                await ws.send_text(text)
            case Message.Binary(data):
                await ws.send_bytes(data)
            case _:
                pass


router = http_router.websocket("/ws", echo)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--max-connections", type=int, required=True)
    parser.add_argument("--http2", action="store_true")
    parser.add_argument("--http1-parser", choices=["auto", "h11", "llhttp"], default="auto")
    args = parser.parse_args()
    config = (
        ServerConfig(http2=args.http2, http1_parser=args.http1_parser)
        .with_max_connections(args.max_connections)
        .with_keep_alive_timeout(IDLE_SECONDS)
        .with_websocket_ping_interval(IDLE_SECONDS)
    )
    Server(router, f"127.0.0.1:{args.port}", config).run()
