"""Subprotocol negotiation. A route that speaks subprotocols refuses (400, inside the
middleware chain) a client whose offer shares none of them: a browser fails a connection whose
101 does not pick one of the subprotocols it offered, so a 101 would only fail later and less
clearly. A client that offers none, and any client of a route that speaks none, is accepted
without a ``Sec-WebSocket-Protocol`` answer (RFC 6455 section 4.2.2); the handler sees
``subprotocol`` ``None``. In memory with ``TestClient``, and over loopback with ``websockets``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest
import trio
import websockets.exceptions
import websockets.sync.client
from websockets.typing import Subprotocol

from trioframe import Request, Response, Router, WebSocketConnection
from trioframe.testing import TestClient, WebSocketRejected

from ..loopback._support import serving

MISMATCH = {
    "status": 400,
    "error": "Bad Request",
    "message": "none of the offered WebSocket subprotocols is supported; "
    "this route speaks chat.v2, chat.v1",
}


async def who(ws: WebSocketConnection) -> None:
    await ws.send_json({"subprotocol": ws.subprotocol})


def app(seen: list[int] | None = None) -> Router:
    """``/chat`` speaks two subprotocols, ``/plain`` none; a middleware records every status."""

    async def record(request: Request, next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await next(request)
        if seen is not None:
            seen.append(response.status)
        return response

    return (
        Router()
        .middleware(record)
        .websocket("/chat", who, subprotocols=["chat.v2", "chat.v1"])
        .websocket("/plain", who)
    )


# -- in memory ---------------------------------------------------------------------------------
@pytest.mark.parametrize("offered", [["other"], ["other", "CHAT.V1"]])
async def test_an_offer_that_shares_no_subprotocol_is_400(offered: list[str]) -> None:
    seen: list[int] = []
    async with TestClient(app(seen)) as client:
        with trio.fail_after(10), pytest.raises(WebSocketRejected) as caught:
            async with client.websocket("/chat", subprotocols=offered):
                pytest.fail("the upgrade was accepted")
    response = caught.value.response
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert "sec-websocket-protocol" not in response.headers
    assert response.json() == MISMATCH
    assert seen == [400]  # the middleware saw the refusal


async def test_one_shared_subprotocol_is_enough() -> None:
    seen: list[int] = []
    async with (
        TestClient(app(seen)) as client,
        client.websocket("/chat", subprotocols=["other", "chat.v1"]) as ws,
    ):
        assert ws.subprotocol == "chat.v1"
        assert ws.response_headers["sec-websocket-protocol"] == "chat.v1"
        assert await ws.receive_json() == {"subprotocol": "chat.v1"}
    assert seen == [101]


@pytest.mark.parametrize(
    ("path", "offered"),
    [("/chat", []), ("/plain", []), ("/plain", ["chat.v1"])],
    ids=["no-offer", "neither", "route-speaks-none"],
)
async def test_no_offer_or_a_route_without_subprotocols_is_accepted_without_one(
    path: str, offered: list[str]
) -> None:
    async with TestClient(app()) as client, client.websocket(path, subprotocols=offered) as ws:
        assert ws.subprotocol is None
        assert "sec-websocket-protocol" not in ws.response_headers
        assert await ws.receive_json() == {"subprotocol": None}


# -- over loopback with the websockets client ----------------------------------------------------
def connect(url: str, offered: list[str]) -> websockets.sync.client.ClientConnection:
    connection: websockets.sync.client.ClientConnection = websockets.sync.client.connect(
        url,
        proxy=None,
        open_timeout=5,
        subprotocols=[Subprotocol(name) for name in offered] or None,
    )
    return connection


def talk(url: str, offered: list[str]) -> tuple[str | None, object]:
    """The subprotocol ``websockets`` agreed on and the handler's message; or the status and
    body of a refused upgrade."""
    try:
        with connect(url, offered) as ws:
            return ws.subprotocol, json.loads(ws.recv(timeout=5))
    except websockets.exceptions.InvalidStatus as refused:
        return str(refused.response.status_code), json.loads(refused.response.body or b"")


@pytest.mark.loopback
async def test_websockets_client_negotiation() -> None:
    with trio.fail_after(15):
        async with serving(app()) as served:
            base = f"ws://{served.host}:{served.port}"

            def run(path: str, offered: list[str]) -> tuple[str | None, object]:
                return talk(base + path, offered)

            assert await trio.to_thread.run_sync(run, "/chat", ["other"]) == ("400", MISMATCH)
            chosen = await trio.to_thread.run_sync(run, "/chat", ["chat.v1", "chat.v2"])
            assert chosen == ("chat.v2", {"subprotocol": "chat.v2"})  # the route's order
            assert await trio.to_thread.run_sync(run, "/chat", []) == (None, {"subprotocol": None})
            plain = await trio.to_thread.run_sync(run, "/plain", ["chat.v1"])
            assert plain == (None, {"subprotocol": None})
