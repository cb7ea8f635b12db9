"""Mistakes in WebSocket routes fail when the app starts, with a message naming the route or
handler: the connection parameter where it cannot be, body extractors on an upgrade, bad
subprotocol names, and wsproto (the ``websocket`` extra) not installed."""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from trioframe import (
    Body,
    ConfigurationError,
    Json,
    Response,
    Router,
    WebSocketConnection,
)
from trioframe.testing import TestClient


async def start(router: Router) -> None:
    async with TestClient(router):
        pass


async def test_websocket_connection_on_an_http_route_fails_at_startup() -> None:
    async def handler(ws: WebSocketConnection) -> Response:
        return Response.text("never")

    with pytest.raises(ConfigurationError, match=r"only available on Router\.websocket routes"):
        await start(Router().get("/", handler))


async def test_a_websocket_handler_needs_exactly_one_connection() -> None:
    async def none() -> None:
        pass

    async def two(a: WebSocketConnection, b: WebSocketConnection) -> None:
        pass

    for handler in (none, two):
        with pytest.raises(ConfigurationError, match="WebSocketConnection"):
            await start(Router().websocket("/ws", handler))


@pytest.mark.parametrize("annotation", [Body, Json[dict[str, int]]])
async def test_body_extractors_are_refused_on_websocket_routes(annotation: Any) -> None:
    async def handler(ws: WebSocketConnection, payload: Any) -> None:
        pass

    handler.__annotations__["payload"] = annotation
    with pytest.raises(ConfigurationError, match="payload"):
        await start(Router().websocket("/ws", handler))


@pytest.mark.parametrize("name", ["", "two words", "a,b", "caf\u00e9"])
def test_subprotocols_must_be_tokens(name: str) -> None:
    async def handler(ws: WebSocketConnection) -> None:
        pass

    with pytest.raises(ConfigurationError, match="subprotocol"):
        Router().websocket("/ws", handler, subprotocols=[name])


async def test_missing_wsproto_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def without_wsproto(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "wsproto" or name.startswith("wsproto."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    async def handler(ws: WebSocketConnection) -> None:
        pass

    async def page() -> Response:
        return Response.text("fine")

    monkeypatch.setattr(builtins, "__import__", without_wsproto)
    with pytest.raises(ConfigurationError, match=r"/ws.*pip install 'trioframe\[websocket\]'"):
        await start(Router().websocket("/ws", handler))
    await start(Router().get("/", page))  # HTTP-only apps still start without wsproto
