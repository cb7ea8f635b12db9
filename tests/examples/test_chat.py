"""``examples/chat.py``: rooms, broadcast, membership, the rooms' nursery and the slow-member
policy; in memory through ``build_router(rooms)`` (and on ``ChatRooms`` itself), over loopback
sockets with trio-websocket (and a hand-made socket for abrupt disconnects), and run as a
script."""

from __future__ import annotations

import pathlib
import runpy
import signal
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
import trio_websocket

from trioframe import Message
from trioframe.testing import TestClient, TestHttpClient, WebSocketRejected

from ..loopback._support import RawConnection, Served, fetch, serving, simple_get
from ._script import running_example

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "chat.py"
CHAT = runpy.run_path(str(EXAMPLE))
open_chat_rooms = CHAT["open_chat_rooms"]
build_router = CHAT["build_router"]
MAX_PENDING: int = CHAT["MAX_PENDING"]
ROOM_BACKLOG: int = CHAT["ROOM_BACKLOG"]
CHAT_CLOSED = Message.Close(1001, "the chat is closing")


@asynccontextmanager
async def chat_client() -> AsyncIterator[TestHttpClient]:
    """An in-memory client of the example's router, with its rooms open around it."""
    async with open_chat_rooms() as rooms, TestClient(build_router(rooms)) as client:
        yield client


def broadcasters() -> list[str]:
    """The names of the rooms' broadcaster tasks running below this test's task, sorted (the
    example names them ``broadcaster <room>``)."""
    names: list[str] = []
    tasks = [trio.lowlevel.current_task()]
    while tasks:
        for nursery in tasks.pop().child_nurseries:
            tasks += nursery.child_tasks
            names += [t.name for t in nursery.child_tasks if t.name.startswith("broadcaster ")]
    return sorted(names)


# -- in memory ---------------------------------------------------------------------------------
async def test_members_of_a_room_hear_each_other_and_not_themselves() -> None:
    with trio.fail_after(5):
        async with chat_client() as client, client.websocket("/rooms/lobby?name=ada") as ada:
            assert await ada.receive_text() == "* ada joined (1 here)"
            async with client.websocket("/rooms/lobby?name=bob") as bob:
                assert await bob.receive_text() == "* bob joined (2 here)"
                assert await ada.receive_text() == "* bob joined (2 here)"
                async with client.websocket("/rooms/lobby?name=cy") as cy:
                    for ws in (ada, bob, cy):
                        assert await ws.receive_text() == "* cy joined (3 here)"
                    assert (await client.get("/rooms")).json() == {"lobby": ["ada", "bob", "cy"]}

                    await ada.send_text("hello all")
                    assert await bob.receive_text() == "ada: hello all"
                    assert await cy.receive_text() == "ada: hello all"
                    await bob.send_text("hi ada")
                    # ada's next line is bob's: her own message did not come back to her.
                    assert await ada.receive_text() == "bob: hi ada"
                    assert await cy.receive_text() == "bob: hi ada"
                    await cy.send_text("ünïcode ✓")
                    assert await ada.receive_text() == "cy: ünïcode ✓"
                    assert await bob.receive_text() == "cy: ünïcode ✓"


async def test_a_room_hears_nothing_from_another_room() -> None:
    with trio.fail_after(5):
        async with (
            chat_client() as client,
            client.websocket("/rooms/lobby?name=ada") as ada,
            client.websocket("/rooms/lobby?name=bob") as bob,
            client.websocket("/rooms/kitchen?name=cy") as cy,
        ):
            assert await ada.receive_text() == "* ada joined (1 here)"
            assert await ada.receive_text() == "* bob joined (2 here)"
            assert await bob.receive_text() == "* bob joined (2 here)"
            assert await cy.receive_text() == "* cy joined (1 here)"
            assert (await client.get("/rooms")).json() == {
                "kitchen": ["cy"],
                "lobby": ["ada", "bob"],
            }

            await ada.send_text("lobby only")
            assert await bob.receive_text() == "ada: lobby only"
            # A broadcaster hands a line to all its room's members at once, so by now cy
            # would have it queued if it had leaked. Her next line must be a kitchen event.
            async with client.websocket("/rooms/kitchen?name=dee") as dee:
                assert await dee.receive_text() == "* dee joined (2 here)"
                assert await cy.receive_text() == "* dee joined (2 here)"
                await cy.send_text("kitchen only")
                assert await dee.receive_text() == "cy: kitchen only"
                await bob.send_text("still lobby")
                assert await ada.receive_text() == "bob: still lobby"
                await dee.send_text("bye")
                assert await cy.receive_text() == "dee: bye"


async def test_leaving_removes_the_member_and_the_last_one_out_deletes_the_room() -> None:
    with trio.fail_after(5):
        async with chat_client() as client:
            async with client.websocket("/rooms/lobby?name=ada") as ada:
                assert await ada.receive_text() == "* ada joined (1 here)"
                async with client.websocket("/rooms/lobby?name=bob") as bob:
                    assert await bob.receive_text() == "* bob joined (2 here)"
                    assert await ada.receive_text() == "* bob joined (2 here)"
                    assert (await client.get("/rooms")).json() == {"lobby": ["ada", "bob"]}
                    await bob.close(1000, "bye")
                # The notice is said once bob is out of the room: no waiting needed.
                assert await ada.receive_text() == "* bob left (1 here)"
                assert (await client.get("/rooms")).json() == {"lobby": ["ada"]}
            await trio.testing.wait_all_tasks_blocked()  # ada's handler has finished
            assert (await client.get("/rooms")).json() == {}
            # A new member finds a fresh room, not a leftover one.
            async with client.websocket("/rooms/lobby?name=cy") as cy:
                assert await cy.receive_text() == "* cy joined (1 here)"


async def test_the_broadcaster_of_an_emptied_room_ends_and_a_new_room_gets_a_new_one() -> None:
    with trio.fail_after(5):
        async with chat_client() as client:
            assert broadcasters() == []
            async with client.websocket("/rooms/kitchen?name=cy") as cy:
                assert await cy.receive_text() == "* cy joined (1 here)"
                async with client.websocket("/rooms/lobby?name=ada") as ada:
                    assert await ada.receive_text() == "* ada joined (1 here)"
                    assert broadcasters() == ["broadcaster kitchen", "broadcaster lobby"]
                # The lobby is empty: deleted, and its broadcaster ends. The kitchen's goes on.
                await trio.testing.wait_all_tasks_blocked()
                assert broadcasters() == ["broadcaster kitchen"]
                assert (await client.get("/rooms")).json() == {"kitchen": ["cy"]}
                async with client.websocket("/rooms/kitchen?name=dee") as dee:
                    assert await dee.receive_text() == "* dee joined (2 here)"
                    assert await cy.receive_text() == "* dee joined (2 here)"
                    await dee.send_text("still served")
                    assert await cy.receive_text() == "dee: still served"
                    # A room of the same name as a deleted one gets a broadcaster of its own.
                    async with client.websocket("/rooms/lobby?name=bob") as bob:
                        assert await bob.receive_text() == "* bob joined (1 here)"
                        assert broadcasters() == ["broadcaster kitchen", "broadcaster lobby"]
            await trio.testing.wait_all_tasks_blocked()
            assert broadcasters() == []
            assert (await client.get("/rooms")).json() == {}


async def test_an_abrupt_disconnect_is_a_leave_and_the_room_goes_on() -> None:
    with trio.fail_after(5):
        async with (
            chat_client() as client,
            client.websocket("/rooms/lobby?name=ada") as ada,
            client.websocket("/rooms/lobby?name=bob") as bob,
        ):
            assert await ada.receive_text() == "* ada joined (1 here)"
            assert await ada.receive_text() == "* bob joined (2 here)"
            assert await bob.receive_text() == "* bob joined (2 here)"
            # Cancelling the session's block drops its connection without a Close frame
            # (the server sees the stream end: code 1006).
            with trio.CancelScope() as drop:
                async with client.websocket("/rooms/lobby?name=cy") as cy:
                    assert await cy.receive_text() == "* cy joined (3 here)"
                    drop.cancel()
                    await trio.sleep_forever()
            assert await ada.receive_text() == "* cy joined (3 here)"
            assert await ada.receive_text() == "* cy left (2 here)"
            assert await bob.receive_text() == "* cy joined (3 here)"
            assert await bob.receive_text() == "* cy left (2 here)"
            assert (await client.get("/rooms")).json() == {"lobby": ["ada", "bob"]}
            await ada.send_text("are you still there?")
            assert await bob.receive_text() == "ada: are you still there?"
            await bob.send_text("yes")
            assert await ada.receive_text() == "bob: yes"


async def test_a_name_is_required_before_the_upgrade() -> None:
    with trio.fail_after(5):
        async with chat_client() as client:
            with pytest.raises(WebSocketRejected) as rejected:
                async with client.websocket("/rooms/lobby"):
                    pass  # pragma: no cover - never reached
            assert rejected.value.response.status_code == 400
            assert (await client.get("/rooms")).json() == {}
            assert broadcasters() == []


async def test_leaving_the_rooms_block_closes_members_with_1001_and_ends_cleanly() -> None:
    """The rooms close while members are still connected (in ``main()`` the server is done
    first; here it keeps serving): they get Close 1001, the block ends, latecomers too get
    1001."""
    close_rooms, rooms_closed = trio.Event(), trio.Event()

    async def run_rooms(*, task_status: trio.TaskStatus[Any]) -> None:
        async with open_chat_rooms() as rooms:
            task_status.started(rooms)
            await close_rooms.wait()
        rooms_closed.set()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            rooms = await nursery.start(run_rooms)
            async with (
                TestClient(build_router(rooms)) as client,
                client.websocket("/rooms/lobby?name=ada") as ada,
                client.websocket("/rooms/lobby?name=bob") as bob,
                client.websocket("/rooms/kitchen?name=cy") as cy,
            ):
                assert await ada.receive_text() == "* ada joined (1 here)"
                for ws in (ada, bob):
                    assert await ws.receive_text() == "* bob joined (2 here)"
                assert await cy.receive_text() == "* cy joined (1 here)"
                await ada.send_text("last words")
                assert await bob.receive_text() == "ada: last words"
                assert broadcasters() == ["broadcaster kitchen", "broadcaster lobby"]

                close_rooms.set()
                await rooms_closed.wait()  # the block ended: its nursery, broadcasters and all
                assert broadcasters() == []
                assert (await client.get("/rooms")).json() == {}
                # Everyone's next message is the Close: no "left" notices, no 1011.
                for ws in (ada, bob, cy):
                    assert await ws.receive() == CHAT_CLOSED
                async with client.websocket("/rooms/lobby?name=dee") as dee:
                    assert await dee.receive() == CHAT_CLOSED
                assert (await client.get("/rooms")).json() == {}


def drain(channel: trio.MemoryReceiveChannel[str]) -> list[str]:
    """What is queued in ``channel`` now."""
    lines: list[str] = []
    while True:
        try:
            lines.append(channel.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return lines


async def test_a_member_whose_channel_is_full_is_dropped_at_once_and_announced_once() -> None:
    # In memory a socket never pushes back, so the policy is checked on ``ChatRooms``
    # itself; ``test_loopback_a_member_that_stops_reading_is_dropped_with_1008`` does it end
    # to end. ``settle()`` lets the broadcaster hand out everything said so far.
    settle = trio.testing.wait_all_tasks_blocked
    with trio.fail_after(5):
        async with open_chat_rooms() as rooms, rooms.join("lobby", "ada") as ada:
            async with rooms.join("lobby", "bob") as bob, rooms.join("lobby", "cy") as cy:
                await settle()
                heard = drain(ada.lines)
                # bob reads nothing. Two join notices and MAX_PENDING - 2 lines fill his
                # channel; ada keeps up.
                said = [f"line {n}" for n in range(MAX_PENDING - 1)]
                for line in said[:-1]:
                    await rooms.say(cy, line)
                    await settle()
                    heard += drain(ada.lines)
                assert rooms.members() == {"lobby": ["ada", "bob", "cy"]}
                # ... so the next line drops him, without waiting for him.
                await rooms.say(cy, said[-1])
                await settle()
                assert rooms.members() == {"lobby": ["ada", "cy"]}
                heard += drain(ada.lines)
                # He still gets what was queued before the drop, then his channel ends, and
                # his connection is to be closed with 1008.
                assert drain(bob.lines) == [
                    "* bob joined (2 here)",
                    "* cy joined (3 here)",
                    *[f"cy: {line}" for line in said[:-1]],
                ]
                with pytest.raises(trio.EndOfChannel):
                    bob.lines.receive_nowait()
                assert bob.goodbye == (1008, "too slow: dropped from the room")
                # What he says now goes nowhere.
                await rooms.say(bob, "wait for me")
                await settle()
            # His handler ending later removes nothing more and announces nothing more
            # (cy's leaving is announced as usual).
            await settle()
            assert drain(ada.lines) == ["* cy left (1 here)"]
            assert heard == [
                "* ada joined (1 here)",
                "* bob joined (2 here)",
                "* cy joined (3 here)",
                *[f"cy: {line}" for line in said],
                "* bob was too slow and was dropped (2 here)",
            ]
            assert rooms.members() == {"lobby": ["ada"]}
        assert rooms.members() == {}


async def test_saying_waits_while_the_rooms_channel_is_full_and_loses_nothing() -> None:
    # All the lines are said at once, from tasks started together: the first goes straight
    # to the broadcaster, ROOM_BACKLOG more fill the room's channel, and the rest have to wait
    # for the broadcaster to make room. bob's channel can hold them all.
    burst = ROOM_BACKLOG + 8
    assert burst + 1 <= MAX_PENDING
    with trio.fail_after(5):
        async with (
            open_chat_rooms() as rooms,
            rooms.join("lobby", "ada") as ada,
            rooms.join("lobby", "bob") as bob,
        ):
            async with trio.open_nursery() as sayers:
                for n in range(burst):
                    sayers.start_soon(rooms.say, ada, f"line {n}")
            await trio.testing.wait_all_tasks_blocked()
            assert rooms.members() == {"lobby": ["ada", "bob"]}
            heard = drain(bob.lines)
            assert heard[0] == "* bob joined (2 here)"
            assert sorted(heard[1:]) == sorted(f"ada: line {n}" for n in range(burst))
            assert drain(ada.lines) == ["* ada joined (1 here)", "* bob joined (2 here)"]


# -- over loopback sockets ---------------------------------------------------------------------
@asynccontextmanager
async def serving_chat() -> AsyncIterator[Served]:
    """The example's router served on a free loopback port, with its rooms open around it."""
    async with open_chat_rooms() as rooms, serving(build_router(rooms)) as served:
        yield served


def ws_url(served: Served, room: str, name: str) -> str:
    return f"ws://{served.host}:{served.port}/rooms/{room}?name={name}"


async def rooms_over_http(served: Served) -> Any:
    response, connection = await fetch(served.host, served.port, simple_get("/rooms"))
    await connection.aclose()
    assert response.status == 200
    return response.json()


@pytest.mark.loopback
async def test_loopback_rooms_broadcast_isolate_and_forget_members() -> None:
    with trio.fail_after(10):
        async with serving_chat() as served:
            async with (
                trio_websocket.open_websocket_url(ws_url(served, "lobby", "ada")) as ada,
                trio_websocket.open_websocket_url(ws_url(served, "kitchen", "cy")) as cy,
            ):
                assert await ada.get_message() == "* ada joined (1 here)"
                assert await cy.get_message() == "* cy joined (1 here)"
                async with trio_websocket.open_websocket_url(ws_url(served, "lobby", "bob")) as bob:
                    assert await bob.get_message() == "* bob joined (2 here)"
                    assert await ada.get_message() == "* bob joined (2 here)"
                    assert await rooms_over_http(served) == {
                        "kitchen": ["cy"],
                        "lobby": ["ada", "bob"],
                    }
                    await ada.send_message("hi bob")
                    assert await bob.get_message() == "ada: hi bob"
                    await bob.send_message("hi ada")
                    assert await ada.get_message() == "bob: hi ada"
                    await cy.send_message("anyone?")  # alone in the kitchen: nobody hears it
                    await ada.send_message("lobby news")
                    assert await bob.get_message() == "ada: lobby news"
                # bob's client closed cleanly: he is gone, and ada is told.
                assert await ada.get_message() == "* bob left (1 here)"
                assert await rooms_over_http(served) == {"kitchen": ["cy"], "lobby": ["ada"]}
                # Nothing of the lobby reached cy: a newcomer's notice is her next line.
                async with trio_websocket.open_websocket_url(ws_url(served, "kitchen", "dee")):
                    assert await cy.get_message() == "* dee joined (2 here)"
            # The clients have finished their closing handshakes: the server has answered
            # every Close, so what is left of its handlers (leaving the rooms) and of the
            # broadcasters runs in this process without waiting for any I/O.
            await trio.testing.wait_all_tasks_blocked()
            assert broadcasters() == []
            assert await rooms_over_http(served) == {}


UPGRADE = (
    "GET /rooms/{room}?name={name} HTTP/1.1\r\n"
    "Host: chat.test\r\n"
    "Upgrade: websocket\r\n"
    "Connection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\n"
    "\r\n"
)


@pytest.mark.loopback
@pytest.mark.parametrize("how", ["eof_mid_frame", "reset"])
async def test_loopback_an_abrupt_disconnect_leaves_the_room_working(how: str) -> None:
    with trio.fail_after(10):
        async with (
            serving_chat() as served,
            trio_websocket.open_websocket_url(ws_url(served, "lobby", "ada")) as ada,
            trio_websocket.open_websocket_url(ws_url(served, "lobby", "bob")) as bob,
        ):
            assert await ada.get_message() == "* ada joined (1 here)"
            assert await ada.get_message() == "* bob joined (2 here)"
            assert await bob.get_message() == "* bob joined (2 here)"

            # cy joins over a bare socket, then vanishes without a Close frame.
            cy = await RawConnection.open(served.host, served.port)
            await cy.send(UPGRADE.format(room="lobby", name="cy").encode())
            assert (await cy.read_response()).status == 101
            assert await ada.get_message() == "* cy joined (3 here)"
            assert await bob.get_message() == "* cy joined (3 here)"
            if how == "reset":  # close with RST instead of FIN
                linger = struct.pack("ii", 1, 0)
                cy.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            else:  # the first two bytes of a masked text frame, then FIN
                await cy.send(b"\x81\x85")
            await cy.aclose()

            assert await ada.get_message() == "* cy left (2 here)"
            assert await bob.get_message() == "* cy left (2 here)"
            assert await rooms_over_http(served) == {"lobby": ["ada", "bob"]}
            await ada.send_message("still here?")
            assert await bob.get_message() == "ada: still here?"
            await bob.send_message("yes")
            assert await ada.get_message() == "bob: yes"


@pytest.mark.loopback
async def test_loopback_a_member_that_stops_reading_is_dropped_with_1008() -> None:
    line = "x" * 65_536
    with trio.fail_after(20):
        async with (
            serving_chat() as served,
            trio_websocket.open_websocket_url(ws_url(served, "lobby", "ada")) as ada,
            trio_websocket.open_websocket_url(ws_url(served, "lobby", "bob")) as bob,
            trio_websocket.open_websocket_url(ws_url(served, "lobby", "cy")) as cy,
        ):
            assert await ada.get_message() == "* ada joined (1 here)"
            assert await ada.get_message() == "* bob joined (2 here)"
            assert await ada.get_message() == "* cy joined (3 here)"
            assert await cy.get_message() == "* cy joined (3 here)"
            # From here on bob reads nothing: once his socket's buffers are full, the lines
            # for him pile up in his channel until the room drops him. ada reads each line
            # before the next is sent, so she never falls behind. The broadcaster hands a line
            # to every channel in one go, so when ada has it, /rooms shows whether it dropped
            # bob.
            sent = 0
            while await rooms_over_http(served) == {"lobby": ["ada", "bob", "cy"]}:
                assert sent < 5_000, "bob was never dropped"
                await cy.send_message(line)
                sent += 1
                assert await ada.get_message() == f"cy: {line}"
            assert await rooms_over_http(served) == {"lobby": ["ada", "cy"]}
            assert await ada.get_message() == "* bob was too slow and was dropped (2 here)"
            assert await cy.get_message() == "* bob was too slow and was dropped (2 here)"
            # Not dropped early: his channel held MAX_PENDING lines, his forwarding task one
            # more (stuck writing it), his socket's buffers maybe a few; the next one dropped him.
            assert sent >= MAX_PENDING + 2

            # bob reads again: everything queued before the drop, then a Close with 1008.
            got: list[str | bytes] = []
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                while True:
                    got.append(await bob.get_message())
            assert closed.value.reason is not None
            assert closed.value.reason.code == 1008
            assert closed.value.reason.reason == "too slow: dropped from the room"
            # Every line but the one that did not fit (and nothing said after the drop).
            assert got == ["* bob joined (2 here)", "* cy joined (3 here)"] + [f"cy: {line}"] * (
                sent - 1
            )
            # The room goes on without him.
            await ada.send_message("bob is gone")
            assert await cy.get_message() == "ada: bob is gone"


# -- as a script -------------------------------------------------------------------------------
@pytest.mark.loopback
async def test_script_serves_and_sigint_closes_members_with_1001() -> None:
    with trio.fail_after(15):
        async with running_example(EXAMPLE) as (process, port):
            base = f"ws://127.0.0.1:{port}/rooms/lobby?name="
            async with (
                trio_websocket.open_websocket_url(base + "ada") as ada,
                trio_websocket.open_websocket_url(base + "bob") as bob,
            ):
                assert await ada.get_message() == "* ada joined (1 here)"
                assert await ada.get_message() == "* bob joined (2 here)"
                assert await bob.get_message() == "* bob joined (2 here)"
                await ada.send_message("hello")
                assert await bob.get_message() == "ada: hello"
                process.send_signal(signal.SIGINT)
                for ws in (ada, bob):
                    with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                        while True:
                            await ws.get_message()
                    assert closed.value.reason is not None
                    assert closed.value.reason.code == 1001
            assert await process.wait() == 0
