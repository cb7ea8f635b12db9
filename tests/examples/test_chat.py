"""``examples/chat.py``: rooms as channels of a ``Broadcast``. In memory through the test
client; over Redis with two servers in this process (two broadcasts, as in two processes),
as a fleet of two workers started by the CLI, and as two instances behind Debian's nginx.
WebSocket clients connected to different processes hear each other."""

from __future__ import annotations

import pathlib
import re
import runpy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio_websocket

from trioframe import Broadcast, MemoryStore, RedisStore, Server
from trioframe.testing import TestClient, WebSocketRejected

from ..cli._cli import serving
from ..deployment._nginx import running_nginx
from ..stores.redis_server import RedisServer

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "chat.py"
CHAT = runpy.run_path(str(EXAMPLE))
build_router = CHAT["build_router"]
store_from_environment = CHAT["store_from_environment"]
WELCOME = re.compile(r"\* (\w+), welcome to (\w+) \(process (\d+)\)")


# -- in memory ---------------------------------------------------------------------------------
async def test_members_of_a_room_hear_each_other_and_not_themselves() -> None:
    with trio.fail_after(5):
        async with (
            TestClient(build_router(Broadcast())) as client,
            client.websocket("/rooms/lobby?name=ada") as ada,
        ):
            assert WELCOME.match(await ada.receive_text())
            async with (
                client.websocket("/rooms/lobby?name=bob") as bob,
                client.websocket("/rooms/attic?name=eve") as eve,
            ):
                assert WELCOME.match(await bob.receive_text())
                assert WELCOME.match(await eve.receive_text())
                assert await ada.receive_text() == "* bob joined"
                await eve.send_text("anyone?")  # another room: nobody in the lobby hears it
                await bob.send_text("hi")
                assert await ada.receive_text() == "bob: hi"
                await ada.send_text("hello bob")
                assert await bob.receive_text() == "ada: hello bob"  # not his own "bob: hi"
            assert await ada.receive_text() == "* bob left"
            await ada.send_text("alone")
            with trio.move_on_after(0.1):
                pytest.fail(f"ada heard something: {await ada.receive_text()}")


async def test_a_name_is_required_before_the_upgrade() -> None:
    async with TestClient(build_router(Broadcast())) as client:
        with pytest.raises(WebSocketRejected) as rejected:
            async with client.websocket("/rooms/lobby"):
                pass
        assert rejected.value.response.status_code == 400


def test_the_store_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHAT_REDIS_URL", raising=False)
    assert isinstance(store_from_environment(), MemoryStore)
    monkeypatch.setenv("CHAT_REDIS_URL", "redis://127.0.0.1:6390/2")
    store = store_from_environment()
    assert isinstance(store, RedisStore) and store.url == "redis://127.0.0.1:6390/2"


# -- over Redis, several processes ---------------------------------------------------------
@asynccontextmanager
async def member(
    port: int, name: str
) -> AsyncIterator[tuple[trio_websocket.WebSocketConnection, str]]:
    """A trio-websocket client in the lobby as ``name``, and the pid that serves it."""
    async with trio_websocket.open_websocket_url(
        f"ws://127.0.0.1:{port}/rooms/lobby?name={name}"
    ) as ws:
        welcome = WELCOME.match(str(await ws.get_message()))
        assert welcome, "no welcome line"
        yield ws, welcome[3]


async def converse(
    ada: trio_websocket.WebSocketConnection, bob: trio_websocket.WebSocketConnection
) -> None:
    """Ada, in the lobby already, hears bob join; then each hears the other."""
    assert await ada.get_message() == "* bob joined"
    await ada.send_message("hi from ada")
    assert await bob.get_message() == "ada: hi from ada"
    await bob.send_message("hi from bob")
    assert await ada.get_message() == "bob: hi from bob"


async def hear_each_other(port: int) -> None:
    """Connect to ``port`` until ada and bob are served by two different processes, then
    check that they hear each other."""
    async with member(port, "ada") as (ada, ada_pid):
        for _ in range(20):
            async with member(port, "bob") as (bob, bob_pid):
                if bob_pid != ada_pid:
                    await converse(ada, bob)
                    return
            assert await ada.get_message() == "* bob joined"  # the same process: again
            assert await ada.get_message() == "* bob left"
        pytest.fail("every connection went to one process")


@pytest.mark.loopback
async def test_two_servers_with_their_own_broadcast_share_rooms_through_redis(
    redis_server: RedisServer,
) -> None:
    ports = []
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            servers = [
                Server(build_router(Broadcast(RedisStore(redis_server.url))), "127.0.0.1:0")
                for _ in range(2)
            ]
            for server in servers:
                addresses = await nursery.start(server.serve)
                ports.append(addresses[0][1])
            async with member(ports[0], "ada") as (ada, _), member(ports[1], "bob") as (bob, _):
                await converse(ada, bob)
            for server in servers:
                server.shutdown()


@pytest.mark.loopback
async def test_a_two_worker_fleet_shares_rooms_through_redis(redis_server: RedisServer) -> None:
    with trio.fail_after(30):
        async with serving(
            "run",
            "examples.chat:router",
            "--port",
            "0",
            "--workers",
            "2",
            env={"CHAT_REDIS_URL": redis_server.url},
        ) as fleet:
            await hear_each_other(fleet.port)


@pytest.mark.loopback
async def test_two_instances_behind_nginx_share_rooms_through_redis(
    redis_server: RedisServer, tmp_path: pathlib.Path
) -> None:
    env = {"CHAT_REDIS_URL": redis_server.url}
    with trio.fail_after(30):
        async with (
            serving("run", "examples.chat:router", "--port", "0", env=env) as one,
            serving("run", "examples.chat:router", "--port", "0", env=env) as two,
            running_nginx([one.port, two.port], tmp_path) as port,
        ):
            await hear_each_other(port)
