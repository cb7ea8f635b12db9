"""The WebSocket echo peer of bench/instructions_streams.py: Uvicorn with the ``websockets``
library (``--ws websockets``) on the asyncio loop, echoing every text and binary message on
``/``, the peer of ``bench/autobahn/echo_app.py``.

Usage: python bench/apps/uvicorn_ws_echo.py PORT [--app starlette|asgi]
(binds 127.0.0.1; keep-alive pings off, as in the trioframe app under count). ``starlette``
(the default): a Starlette ``WebSocketRoute``, what an application written for Uvicorn
looks like; ``asgi``: a bare ASGI callable, Uvicorn and websockets with no framework.
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket


async def starlette_echo(websocket: WebSocket) -> None:
    await websocket.accept()
    async for message in websocket.iter_text():
        await websocket.send_text(message)


starlette_app = Starlette(routes=[WebSocketRoute("/", starlette_echo)])


async def asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Echo on any WebSocket path; this server takes no HTTP requests (lifespan aside)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    assert scope["type"] == "websocket"
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while True:
        event = await receive()
        if event["type"] != "websocket.receive":
            return  # websocket.disconnect
        if event.get("text") is not None:
            await send({"type": "websocket.send", "text": event["text"]})
        else:
            await send({"type": "websocket.send", "bytes": event["bytes"]})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--app", choices=("starlette", "asgi"), default="starlette")
    args = parser.parse_args()
    uvicorn.run(
        starlette_app if args.app == "starlette" else asgi_app,
        host="127.0.0.1",
        port=args.port,
        loop="asyncio",
        ws="websockets",
        ws_ping_interval=None,
        log_level="warning",
        access_log=False,
    )
