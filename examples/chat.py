"""Chat rooms over WebSocket: ``python examples/chat.py`` serves on 127.0.0.1:3000
(the ``PORT`` environment variable picks another port).

WebSocket support needs the ``websocket`` extra: ``pip install 'trioframe[websocket]'``.

Open two terminals and join the same room under two names::

    python -m websockets 'ws://127.0.0.1:3000/rooms/lobby?name=ada'
    python -m websockets 'ws://127.0.0.1:3000/rooms/lobby?name=bob'

What ada types, bob sees as ``ada: ...`` (and the other way round); people in other rooms
see nothing of it. Everyone in a room is told when someone joins or leaves, as
``* bob joined (2 here)``. ``curl http://127.0.0.1:3000/rooms`` lists who is where.

How it is built:

* ``ChatRooms`` is application state (``Router().state(rooms)``, read with
  ``State[ChatRooms]``). It owns a trio nursery, so it is opened with
  ``async with open_chat_rooms() as rooms:`` and the server runs inside that block.
* Each room has a bounded memory channel of the lines said in it, and a broadcaster task in
  that nursery hands every line to each member's own bounded channel with ``send_nowait``,
  which never waits: one member with a bad connection cannot hold up the room.
* Saying something waits while the room's channel is full (``ROOM_BACKLOG`` lines): the
  sender is slowed down, nobody else is, and no line is lost.
* Each member's handler forwards the member's channel to its socket in a task of its own
  while it reads what the member types. ``async with rooms.join(...)`` removes the member on
  the way out, whatever ended the connection. The last one out deletes the room: its channel
  is closed, and its broadcaster ends.
* A member that cannot keep up (``MAX_PENDING`` lines waiting for its socket) is dropped:
  removed from the room at once, then sent what was already waiting and a Close with code
  1008. If it reads nothing at all, the server's ``send_timeout`` ends the connection.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import attrs
import trio

from trioframe import (
    Message,
    Path,
    Query,
    Response,
    Router,
    Server,
    State,
    WebSocketClosed,
    WebSocketConnection,
)

#: Lines a member may have waiting for its socket before the room drops it as too slow.
MAX_PENDING = 32
#: Lines said in a room and not yet handed out by its broadcaster; then ``say`` waits.
ROOM_BACKLOG = 16

TOO_SLOW = (1008, "too slow: dropped from the room")
CHAT_CLOSED = (1001, "the chat is closing")


@attrs.frozen
class Visitor:
    """The query string of ``/rooms/{room}``: ``?name=ada`` (without it: 400, no upgrade)."""

    name: str


class Member:
    """One connection in one room. The room writes lines into a bounded channel; the
    member's handler reads them from ``lines`` and sends them to the socket."""

    def __init__(self, name: str, room: str) -> None:
        self.name = name
        self.room = room
        self._send, self.lines = trio.open_memory_channel[str](MAX_PENDING)
        #: The Close code and reason for the connection once ``lines`` has ended.
        self.goodbye = (1000, "")
        #: Set by the broadcaster with the member's join notice: what was said in the room
        #: before that (and was still queued when the member joined) is not for them.
        self.listening = False

    def offer(self, line: str) -> bool:
        """Queue ``line`` without waiting; ``False`` when the channel is full."""
        try:
            self._send.send_nowait(line)
        except trio.WouldBlock:
            return False
        return True

    def let_go(self, code: int, reason: str) -> None:
        """No more lines: ``lines`` ends once the member has read what is queued."""
        self.goodbye = (code, reason)
        self._send.close()


@attrs.frozen
class Line:
    """What goes through a room's channel: ``text`` for every member but ``sender``
    (``None`` for the room's own notices). A join notice names the ``newcomer``, who hears
    the room from that line on."""

    text: str
    sender: Member | None = None
    newcomer: Member | None = None


class Room:
    """A room's members, and the channel of what is said there, read by its broadcaster."""

    def __init__(self) -> None:
        self.members: set[Member] = set()
        self.send_channel, self.receive_channel = trio.open_memory_channel[Line](ROOM_BACKLOG)


class ChatRooms:
    """Who is in which room, and a broadcaster task per room in ``nursery``. Handlers and
    broadcasters all run in one trio thread, and nothing here awaits between reading and
    changing the rooms, so they never change under a method's feet: no lock needed."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        self._rooms: dict[str, Room] = {}
        self._closed = False

    def members(self) -> dict[str, list[str]]:
        """Each room's member names, sorted: ``{"lobby": ["ada", "bob"]}``."""
        return {
            name: sorted(member.name for member in room.members)
            for name, room in sorted(self._rooms.items())
        }

    @asynccontextmanager
    async def join(self, room_name: str, name: str) -> AsyncIterator[Member]:
        """Add a member named ``name`` to ``room_name`` (created if needed) for the ``async
        with`` block; everyone there, the newcomer included, is told. On the way out, however
        the block ends, the member is removed and the others are told."""
        member = Member(name, room_name)
        if self._closed:  # too late: the chat is over, send the newcomer away
            member.let_go(*CHAT_CLOSED)
            yield member
            return
        room = self._rooms.get(room_name)
        if room is None:
            room = self._rooms[room_name] = Room()
            self._nursery.start_soon(self._broadcast, room, name=f"broadcaster {room_name}")
        room.members.add(member)
        try:
            notice = f"* {name} joined ({len(room.members)} here)"
            await self._post(room, Line(notice, newcomer=member))
            yield member
        finally:
            if left := self._remove(member):
                await self._post(room, Line(f"* {name} left ({left} here)"))

    async def say(self, member: Member, text: str) -> None:
        """Say ``text`` in the member's room, to everyone there but the member. Waits while
        the room's channel is full; does nothing once the member is out of the room."""
        room = self._rooms.get(member.room)
        if room is not None and member in room.members:
            await self._post(room, Line(f"{member.name}: {text}", sender=member))

    def close(self) -> None:
        """Let every member go (their connections close with 1001) and delete every room,
        which ends the broadcasters. ``open_chat_rooms`` calls it at the end of its block."""
        self._closed = True
        for room in list(self._rooms.values()):
            for member in list(room.members):
                self._remove(member, CHAT_CLOSED)

    async def _post(self, room: Room, line: Line) -> None:
        # ClosedResourceError: the room was deleted while we waited; nobody is left to tell.
        with suppress(trio.ClosedResourceError):
            await room.send_channel.send(line)

    async def _broadcast(self, room: Room) -> None:
        """The broadcaster: hand out each line said in ``room``. It ends when the room's
        channel is closed (the room was deleted) and what was queued has been handed out."""
        async for line in room.receive_channel:
            if line.newcomer is not None:
                line.newcomer.listening = True
            self._deliver(room, line.text, line.sender)

    def _deliver(self, room: Room, text: str, sender: Member | None = None) -> None:
        """Give ``text`` to every member of ``room`` but ``sender``. Never waits: a member
        whose channel is full is dropped from the room instead."""
        listeners = [m for m in room.members if m.listening and m is not sender]
        too_slow = [m for m in listeners if not m.offer(text)]
        # Drop them only now, so that everyone gets ``text`` before the notice of a drop.
        for member in too_slow:
            if left := self._remove(member, TOO_SLOW):
                self._deliver(room, f"* {member.name} was too slow and was dropped ({left} here)")

    def _remove(self, member: Member, goodbye: tuple[int, str] = (1000, "")) -> int:
        """Take ``member`` out of its room and let it go; return how many are still there
        (0: nobody to tell, or the member was out already)."""
        room = self._rooms.get(member.room)
        if room is None or member not in room.members:
            return 0  # removed already (dropped as too slow, then its handler ended)
        room.members.remove(member)
        member.let_go(*goodbye)
        if not room.members:  # the last one out: the room goes, and its broadcaster ends
            del self._rooms[member.room]
            room.send_channel.close()
        return len(room.members)


@asynccontextmanager
async def open_chat_rooms() -> AsyncIterator[ChatRooms]:
    """``ChatRooms`` with a nursery for the broadcasters, for the ``async with`` block. At its
    end the rooms are closed (members still there get Close 1001), and the block exits once
    the broadcasters have handed out what was queued."""
    async with trio.open_nursery() as nursery:
        rooms = ChatRooms(nursery)
        try:
            yield rooms
        finally:
            rooms.close()


async def forward(member: Member, ws: WebSocketConnection) -> None:
    """Send the room's lines to the socket until the room lets the member go."""
    # A send on a connection that has ended raises WebSocketClosed. The handler's reading
    # loop sees the end too and finishes the handler, so there is nothing to do about it.
    with suppress(WebSocketClosed):
        async for line in member.lines:
            await ws.send_text(line)
        # ``lines`` ended: the member was dropped as too slow, or the chat is closing.
        await ws.close(*member.goodbye)


async def chat(
    ws: WebSocketConnection, room: Path[str], visitor: Query[Visitor], rooms: State[ChatRooms]
) -> None:
    async with rooms.join(room, visitor.name) as member, trio.open_nursery() as nursery:
        nursery.start_soon(forward, member, ws)
        # Read what the member types until the connection ends.
        async for message in ws:
            match message:
                case Message.Text(text):
                    await rooms.say(member, text)
                case Message.Close():
                    break  # the member left, or its connection dropped (code 1006)
                case _:
                    pass  # binary messages, pings and pongs: nothing to do
        nursery.cancel_scope.cancel()  # stop forwarding: the connection is over


async def list_rooms(rooms: State[ChatRooms]) -> Response:
    return Response.json(rooms.members())


def build_router(rooms: ChatRooms) -> Router:
    return Router().state(rooms).get("/rooms", list_rooms).websocket("/rooms/{room}", chat)


async def shut_down_on_signal(
    server: Server, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """On SIGINT (Ctrl-C) or SIGTERM, shut the server down gracefully: it stops accepting,
    and open WebSockets get Close 1001. A second Ctrl-C stops at once."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            logging.getLogger("chat").info("%s: shutting down", signal.Signals(signum).name)
            server.shutdown()
            return


async def main() -> None:
    # The rooms' nursery outlives the server: the block ends after ``serve()`` has returned,
    # when every connection is closed and every member has left.
    async with open_chat_rooms() as rooms, trio.open_nursery() as nursery:
        server = Server(build_router(rooms), ("127.0.0.1", int(os.environ.get("PORT", "3000"))))
        # ``serve()`` installs no signal handlers (``Server.run()`` does): we watch for them.
        await nursery.start(shut_down_on_signal, server)
        await server.serve()
        nursery.cancel_scope.cancel()  # served: stop watching for signals


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    trio.run(main)
