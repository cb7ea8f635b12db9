"""A WebSocket echo server: ``python examples/websocket_echo.py`` serves on 127.0.0.1:3000
(the ``PORT`` environment variable picks another port).

WebSocket support needs the ``websocket`` extra: ``pip install 'trioframe[websocket]'``.

Talk to it with any WebSocket client, for example the one that comes with the
``websockets`` library::

    python -m websockets ws://127.0.0.1:3000/ws

It greets you once, then answers every text message ``t`` with ``Echo: t``. A plain HTTP
request to ``/ws`` (``curl -i http://127.0.0.1:3000/ws``) is answered with
``426 Upgrade Required``.
"""

from __future__ import annotations

import logging
import os

from trioframe import Message, Router, Server, WebSocketConnection


async def echo(ws: WebSocketConnection) -> None:
    # By the time the handler runs, the handshake is done: the connection is open.
    await ws.send_text("Welcome! Every text message you send comes back as 'Echo: ...'.")

    # ``recv()`` waits for the next message and returns ``None`` once the connection is over.
    while (message := await ws.recv()) is not None:
        # Each kind of message is a small class; ``match`` picks them apart.
        match message:
            case Message.Text(text):
                await ws.send_text(f"Echo: {text}")
            case Message.Close(code, reason):
                # The client said goodbye (or vanished: then the code is 1006). The server
                # has answered its Close already; all that is left to do is stop.
                logging.getLogger("echo").info("client closed: %s %s", code, reason)
                break
            case _:
                # Binary messages are ignored here; pings are answered by the server
                # automatically (they are delivered too, for handlers that care).
                pass


router = Router().websocket("/ws", echo)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
