"""Chat rooms over WebSocket, with ``Broadcast``: ``python examples/chat.py`` serves on
127.0.0.1:3000 (the ``PORT`` environment variable picks another port).

WebSocket support needs the ``websocket`` extra: ``pip install 'trioframe[websocket]'``.

Open two terminals and join the same room under two names::

    python -m websockets 'ws://127.0.0.1:3000/rooms/lobby?name=ada'
    python -m websockets 'ws://127.0.0.1:3000/rooms/lobby?name=bob'

What ada types, bob sees as ``ada: ...`` (and the other way round); people in other rooms
see nothing of it. Everyone in a room is told when someone joins or leaves (``* bob joined``).

Each room is a channel of one ``Broadcast``. Without configuration it lives in this process
(``MemoryStore``); with ``CHAT_REDIS_URL`` set it goes through Redis, so people connected to
different workers or different machines share the rooms::

    CHAT_REDIS_URL=redis://127.0.0.1:6379/0 trioframe run examples.chat:router --workers 2

How it is built:

* ``build_router(broadcast)`` registers ``broadcast.lifespan``: over Redis, the broadcast's
  connections live in the app nursery for as long as the server serves.
* Each member's handler subscribes to its room, forwards what is published there to its
  socket in a task of its own, and publishes what the member types. Lines carry the id of
  the connection that said them, so nobody hears their own lines back.
* A member that cannot keep up loses the oldest lines (``MAX_PENDING`` are kept) and is told
  how many it missed; nobody else is slowed down. If it reads nothing at all, the server's
  ``send_timeout`` ends the connection.
* Redis down: a line that cannot be published is answered with ``* not sent``; the
  connection stays, and hears the room again once Redis is back (lines said meanwhile are
  lost: delivery is at most once).
"""

from __future__ import annotations

import os
import secrets
from contextlib import suppress
from typing import Any

import attrs
import trio

from trioframe import (
    Broadcast,
    MemoryStore,
    Message,
    Path,
    Query,
    RedisStore,
    Router,
    Server,
    StoreUnavailable,
    Subscription,
    WebSocketClosed,
    WebSocketConnection,
)

#: Lines a member may have waiting for its socket before it loses the oldest.
MAX_PENDING = 32


@attrs.frozen
class Visitor:
    """The query string of ``/rooms/{room}``: ``?name=ada`` (without it: 400, no upgrade)."""

    name: str


def store_from_environment() -> MemoryStore | RedisStore:
    """``RedisStore(CHAT_REDIS_URL)`` when that variable is set, else ``MemoryStore()``."""
    url = os.environ.get("CHAT_REDIS_URL")
    return RedisStore(url) if url else MemoryStore()


async def forward(lines: Subscription, me: str, ws: WebSocketConnection) -> None:
    """Send the room's lines, but the member's own, to the socket."""
    missed = 0
    # A send on a connection that has ended raises WebSocketClosed; the handler's reading
    # loop sees the end too and finishes the handler.
    with suppress(WebSocketClosed):
        async for line in lines:
            if lines.dropped > missed:
                await ws.send_text(f"* you missed {lines.dropped - missed} lines: too slow")
                missed = lines.dropped
            if line["from"] != me:
                await ws.send_text(line["text"])


def build_router(broadcast: Broadcast) -> Router:
    """The chat's routes, its rooms being channels of ``broadcast``."""

    async def say(channel: str, line: dict[str, Any]) -> bool:
        try:
            await broadcast.publish(channel, line)
        except StoreUnavailable:
            return False
        return True

    async def chat(ws: WebSocketConnection, room: Path[str], visitor: Query[Visitor]) -> None:
        me, channel = secrets.token_hex(8), f"room:{room}"
        async with broadcast.subscribe(channel, max_pending=MAX_PENDING) as lines:
            await ws.send_text(f"* {visitor.name}, welcome to {room} (process {os.getpid()})")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(forward, lines, me, ws)
                try:
                    await say(channel, {"from": me, "text": f"* {visitor.name} joined"})
                    async for message in ws:
                        match message:
                            case Message.Text(text):
                                line = {"from": me, "text": f"{visitor.name}: {text}"}
                                if not await say(channel, line):
                                    await ws.send_text("* not sent: the chat is unavailable")
                            case Message.Close():
                                break  # the member left, or its connection dropped
                            case _:
                                pass  # binary messages, pings and pongs: nothing to do
                finally:
                    # Even when cancelled (shutdown), say goodbye: bounded by the store's
                    # timeout, and nothing to do if it fails.
                    with trio.CancelScope(shield=True):
                        await say(channel, {"from": me, "text": f"* {visitor.name} left"})
                    nursery.cancel_scope.cancel()

    return Router().lifespan(broadcast.lifespan).websocket("/rooms/{room}", chat)


router = build_router(Broadcast(store_from_environment()))

if __name__ == "__main__":
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
