"""``examples/websocket_echo.py``: in memory through its router, over a loopback socket with
trio-websocket, and run as a script."""

from __future__ import annotations

import pathlib
import runpy
import signal

import pytest
import trio
import trio_websocket

from trioframe import Message, Router
from trioframe.testing import TestClient

from ..loopback._support import serving
from ._script import running_example

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "websocket_echo.py"
WELCOME = "Welcome! Every text message you send comes back as 'Echo: ...'."


def load() -> Router:
    router: Router = runpy.run_path(str(EXAMPLE))["router"]
    return router


async def test_welcome_then_each_text_comes_back_prefixed() -> None:
    with trio.fail_after(5):
        async with TestClient(load()) as client, client.websocket("/ws") as ws:
            assert await ws.receive_text() == WELCOME
            for text in ["hello", "", "héllo wörld ✓", "x" * 100_000]:
                await ws.send_text(text)
                assert await ws.receive_text() == f"Echo: {text}"


async def test_binary_messages_and_pings_get_no_echo() -> None:
    with trio.fail_after(5):
        async with TestClient(load()) as client, client.websocket("/ws") as ws:
            assert await ws.receive_text() == WELCOME
            await ws.send_bytes(b"\x00\x01")
            await ws.ping(b"are you there")
            await ws.send_text("after")
            # The server's automatic pong comes first, then the echo of "after": had the
            # binary message been answered, a Binary would stand between them.
            assert await ws.receive() == Message.Pong(b"are you there")
            assert await ws.receive() == Message.Text("Echo: after")


async def test_the_closing_handshake_completes_with_1000() -> None:
    with trio.fail_after(5):
        async with TestClient(load()) as client, client.websocket("/ws") as ws:
            assert await ws.receive_text() == WELCOME
            await ws.send_text("bye")
            await ws.close(1000, "done")
            assert ws.close_code == 1000
            # The echo sent before the Close is still delivered, then the Close itself.
            assert await ws.receive() == Message.Text("Echo: bye")
            assert isinstance(await ws.receive(), Message.Close)


async def test_plain_http_on_the_websocket_route_is_426() -> None:
    async with TestClient(load()) as client:
        response = await client.get("/ws")
        assert response.status_code == 426
        assert response.headers["upgrade"].lower() == "websocket"


@pytest.mark.loopback
async def test_echo_over_loopback_with_trio_websocket() -> None:
    with trio.fail_after(10):
        async with serving(load()) as served:
            url = f"ws://{served.host}:{served.port}/ws"
            async with trio_websocket.open_websocket_url(url) as ws:
                assert await ws.get_message() == WELCOME
                for text in ["one", "two", "ünïcode ✓"]:
                    await ws.send_message(text)
                    assert await ws.get_message() == f"Echo: {text}"
                await ws.send_message(b"ignored")
                await ws.send_message("still here")
                assert await ws.get_message() == "Echo: still here"


@pytest.mark.loopback
async def test_script_serves_and_sigint_closes_sockets_with_1001() -> None:
    with trio.fail_after(15):
        async with running_example(EXAMPLE) as (process, port):
            async with trio_websocket.open_websocket_url(f"ws://127.0.0.1:{port}/ws") as ws:
                assert await ws.get_message() == WELCOME
                await ws.send_message("ping")
                assert await ws.get_message() == "Echo: ping"
                process.send_signal(signal.SIGINT)
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    await ws.get_message()
                assert closed.value.reason is not None
                assert closed.value.reason.code == 1001  # graceful shutdown: "going away"
            assert await process.wait() == 0
