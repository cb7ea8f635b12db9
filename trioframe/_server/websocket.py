"""The server side of one WebSocket connection: wsproto's frame state machine driven over the
byte stream an exchange's ``upgrade()`` gave, the handler, keep-alive pings and the closing
handshake.

It runs in the task and cancel scope of the exchange that switched protocols, in a nursery of
its own::

    ServerSession.serve
    ├── handler     the handler, then the closing handshake
    ├── reader      bytes → wsproto → messages into a bounded queue; pongs, Close replies
    ├── keepalive   a ping every websocket_ping_interval; no pong in time → drop
    └── watchdog    a write stuck for send_timeout → drop (from the first write that waits)

(The handler runs in a task of its own, not in the exchange's: each step of a task resumes
every coroutine in its await chain, and the exchange's is deep.)

Every write goes through one lock (wsproto's output, compressed output in particular, must
reach the wire in the order it was produced) and ``FrameWriter``, which sends on plain TCP
without waiting what the socket takes whole and bounds a write that waits by
``send_timeout`` (its watchdog is the fourth task). Each of the
handler's calls is a cancel point, and a schedule point unless the call before it waited
(``_pass_checkpoint``): an echo loop, which waits for every message, yields once per message,
not twice. When the connection is over (close handshake done, peer gone, protocol error,
dead peer) the queue is closed and the final ``Message.Close`` waits behind whatever the
handler has not read yet. When the peer sends Close, or a connection fails (protocol error, oversized message), the
handler first answers the messages that came before it (``_let_handler_catch_up``), then the
server's Close goes out: after the peer's Close, data messages may still be sent until then
(RFC 6455 section 5.5.1, ``HalfClosingConnection``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import suppress
from typing import Any, TypeVar

import trio
from wsproto.connection import ConnectionState, ConnectionType
from wsproto.events import (
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    Pong,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError

from .._websocket.assembly import MessageAssembler, MessageTooLarge
from .._websocket.connection import WebSocketClosed, WebSocketConnection
from .._websocket.half_closing import HalfClosingConnection
from .._websocket.messages import Close, Message
from .._websocket.messages import Ping as PingMessage
from .._websocket.messages import Pong as PongMessage
from .config import ServerConfig
from .websocket_sync import Inbox, SendLock
from .websocket_writer import FrameWriter

__all__ = ["PING_FLOOD", "RECEIVE_QUEUE", "ServerSession"]

log = logging.getLogger("trioframe")

#: Messages the server holds for a handler that does not read; then it stops reading the
#: socket, and TCP flow control slows the peer down.
RECEIVE_QUEUE = 16
#: Up to this many pings in one read are each answered; beyond it, only the last one is
#: (RFC 6455 section 5.5.3 allows answering only the most recent ping).
PING_FLOOD = 16
_KEEPALIVE_PAYLOAD = b"trioframe"
_GOING_AWAY = (1001, "server shutting down")

T = TypeVar("T")


class ServerSession:
    """One WebSocket connection after the upgrade, over ``stream`` (``b""`` from it: the end of
    the stream). ``serve(run)`` returns once the handler has finished and the connection is
    closed or given up on."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        config: ServerConfig,
        extensions: list[Any],
    ) -> None:
        self._stream = stream
        self._timeouts = config.timeouts
        self._options = config.websocket_options
        self._ws = HalfClosingConnection(ConnectionType.SERVER, extensions)
        self._send_lock = SendLock()
        self._writer = FrameWriter(stream, config.timeouts.send_timeout, self._send_timed_out)
        self._inbox = Inbox[Message](RECEIVE_QUEUE)
        self._handler_waited = False  # the handler's last call waited: the next need not yield
        self._final: Close | None = None  # delivered once the queue is drained
        self._receiving = True  # the queue is open: messages may still come
        self._close_delivered = False  # the handler has the final Close: its sends are over
        self._ended = trio.Event()
        self._end_code = 1006
        self._end_reason = ""
        self._assembler = MessageAssembler(config.app_limits.websocket_max_message_size)
        self._pong = trio.Event()
        self._reader_waits = False  # for the handler (to make room, to catch up), not the peer
        self._queued = 0  # messages put in the queue so far
        self._asked = 0  # calls of receive() so far: one more than _queued once caught up
        self._caught_up: trio.Event | None = None  # set when the handler has caught up
        self._discard = False  # the handler has finished: drop what still arrives
        self._nursery: trio.Nursery | None = None
        self._handler_scope = trio.CancelScope()

    # -- lifetime ------------------------------------------------------------------------------
    async def serve(
        self, run: Callable[[WebSocketConnection], Awaitable[Any]], subprotocol: str | None
    ) -> None:
        """Run the handler on this connection, then close (1000 when it returned, 1011 when it
        raised) and wait up to ``websocket_close_timeout`` for the peer's Close."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._handle, nursery, run, WebSocketConnection(self, subprotocol))
            nursery.start_soon(self._read_loop)
            nursery.start_soon(self._keepalive)

    async def _handle(
        self,
        nursery: trio.Nursery,
        run: Callable[[WebSocketConnection], Awaitable[Any]],
        ws: WebSocketConnection,
    ) -> None:
        """The handler's task: the handler, then the closing handshake; then the other tasks
        are cancelled."""
        try:
            code, reason = await self._run_handler(run, ws)
            self._discard = True
            if self._caught_up is not None:
                self._caught_up.set()
            await self.close(code, reason)
            with trio.move_on_after(self._options.websocket_close_timeout):
                await self._ended.wait()
            nursery.cancel_scope.cancel()
        finally:
            # From here the nursery may close at any moment: a shutdown or a disconnect
            # that comes now has no handler left to tell, so nothing is started for it.
            self._nursery = None

    async def _run_handler(
        self, run: Callable[[WebSocketConnection], Awaitable[Any]], ws: WebSocketConnection
    ) -> tuple[int, str]:
        with self._handler_scope:
            try:
                await run(ws)
            except WebSocketClosed:
                pass  # the connection ended under the handler: nothing left to report
            except Exception as error:
                if not _only_closed(error):
                    log.exception("WebSocket handler failed")
                    return (1011, "internal error")
        return (1000, "")

    def begin_shutdown(self) -> None:
        """Graceful shutdown: close with 1001. The handler sees the peer's reply as
        ``Message.Close`` and then ``None``; sends fail with ``WebSocketClosed``."""
        if self._nursery is not None and self._ws.state is ConnectionState.OPEN:
            self._nursery.start_soon(self.close, *_GOING_AWAY)

    def _stop_receiving(self, code: int, reason: str) -> None:
        """No more messages: the handler drains its queue, gets ``Message.Close(code,
        reason)``, then ``None``. Sends may still go out (until ``_end``)."""
        if self._receiving:
            self._receiving = False
            self._end_code, self._end_reason = code, reason
            self._final = Close(code, reason)
            self._inbox.close()

    def _end(self, code: int, reason: str, final: Close) -> None:
        """The connection is over: no more bytes either way. The handler drains its queue,
        gets ``final`` (unless the peer's Close came first), then ``None``; with
        ``cancel_on_disconnect`` a handler still running ``websocket_close_timeout`` later is
        cancelled."""
        if self._ended.is_set():
            return
        self._stop_receiving(final.code, final.reason)
        self._end_code, self._end_reason = code, reason
        self._ended.set()
        if self._timeouts.cancel_on_disconnect and self._nursery is not None:
            self._nursery.start_soon(self._cancel_lingering_handler)

    async def _cancel_lingering_handler(self) -> None:
        await trio.sleep(self._options.websocket_close_timeout)
        self._handler_scope.cancel()

    async def _abort(self, code: int, reason: str, final: Close) -> None:
        """End now and tear the TCP connection down (wsproto would leave it open)."""
        self._end(code, reason, final)
        await trio.aclose_forcefully(self._stream)

    # -- the handler's side ---------------------------------------------------------------------
    async def receive(self) -> Message | None:
        """The next message; the final ``Close`` once (from then on the handler's sends raise
        ``WebSocketClosed``); then ``None``."""
        self._asked += 1
        if self._caught_up is not None and self._asked > self._queued:
            self._caught_up.set()
        inbox = self._inbox
        try:
            if inbox.ready():
                await self._pass_checkpoint()
                return await inbox.get()  # (at once)
            message = await inbox.get()
            self._handler_waited = True
            return message
        except trio.EndOfChannel:
            final, self._final = self._final, None
            self._close_delivered = True
            return final

    async def _pass_checkpoint(self) -> None:
        """The checkpoint of a handler's call that will not wait: a cancel point always, a
        schedule point unless the handler's call before this one waited (it let the other
        tasks run then). No two calls of a handler in a row go without a schedule point."""
        if self._handler_waited:
            self._handler_waited = False
            await trio.lowlevel.checkpoint_if_cancelled()
        else:
            await trio.lowlevel.checkpoint()

    async def send_message(self, data: str | bytes) -> None:
        """Send a text (``str``) or binary message; ``WebSocketClosed`` once closing."""
        await self._pass_checkpoint()
        self._handler_waited = await self._send(self._ws.send_message, data, raise_closed=True)

    async def send_ping(self, data: bytes) -> None:
        """Send a ping; ``WebSocketClosed`` once closing."""
        await self._pass_checkpoint()
        self._handler_waited = await self._send(self._serialize, (Ping(payload=data),), True)

    async def close(self, code: int, reason: str) -> None:
        """Send Close unless the connection is already closing or gone (then nothing
        happens, a write that fails included)."""
        await self._pass_checkpoint()
        if self._ws.state is ConnectionState.OPEN:
            with suppress(WebSocketClosed):
                await self._send_event(CloseConnection(code=code, reason=reason))

    # -- writing --------------------------------------------------------------------------------
    async def _send_event(self, *events: Event, raise_closed: bool = False) -> None:
        """Serialize ``events`` and write them in one go, under the send lock (see
        ``_send``)."""
        await self._send(self._serialize, events, raise_closed=raise_closed)

    async def _send(
        self, serialize: Callable[[T], bytes | bytearray], what: T, raise_closed: bool = False
    ) -> bool:
        """Write ``serialize(what)`` under the send lock; nothing when wsproto refuses it
        (``LocalProtocolError``: closing). A handler's send (``raise_closed``) raises
        ``WebSocketClosed`` when it cannot go out: the connection has ended, or the handler
        has been given the final Close; a broken stream or a write that timed out ends the
        connection (``WebSocketClosed`` for any send). Not a checkpoint unless it waits (for
        the lock or the socket); returns whether it waited."""
        lock = self._send_lock
        waited = not lock.acquire_nowait()
        if waited:
            await lock.acquire()
        try:
            data = None
            if not (self._ended.is_set() or (raise_closed and self._close_delivered)):
                with suppress(LocalProtocolError):
                    data = serialize(what)
            if data is None:
                if raise_closed:
                    raise WebSocketClosed(self._end_code, self._end_reason)
                return waited
            try:  # bounded by send_timeout (FrameWriter)
                return await self._writer.write(data, self._nursery) or waited
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                await self._abort(1006, "connection lost", Close(1006, ""))
                raise WebSocketClosed(self._end_code, self._end_reason) from None
        finally:
            lock.release()

    def _serialize(self, events: tuple[Event, ...]) -> bytes:
        if len(events) == 1:
            return self._ws.send(events[0])
        return b"".join([self._ws.send(event) for event in events])

    async def _send_timed_out(self) -> None:
        """The writer's watchdog: a write has waited ``send_timeout`` for the peer to read."""
        await self._abort(1006, "send timed out", Close(1006, ""))

    # -- reading --------------------------------------------------------------------------------
    async def _receive_bytes(self) -> bytes:
        try:
            return bytes(await self._stream.receive_some())
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def _read_loop(self) -> None:
        ws = self._ws
        while not self._ended.is_set():
            data = await self._receive_bytes()
            if not data:  # the peer went away without a Close
                self._end(1006, "", Close(1006, ""))
                return
            try:
                whole = ws.read_messages(data, self._assembler.limit, RECEIVE_QUEUE)
                if whole is not None:  # whole data frames only, read without wsproto
                    for message in whole:
                        await self._queue(message)
                    continue
                ws.receive_data(data)
                # one event at a time: a read of tiny frames is never a list of them
                await self._process(ws.events())
            except (WebSocketClosed, trio.ClosedResourceError):
                return  # a write failed, or the queue was closed: the connection has ended

    async def _process(self, events: Iterator[Event]) -> None:
        pings: list[Ping] = []  # at most PING_FLOOD + 1: past that only the last one counts
        for event in events:
            if type(event) is TextMessage or type(event) is BytesMessage:
                try:
                    message = self._assembler.add(event)
                except MessageTooLarge as error:
                    await self._fail(1009, str(error))
                    return
                if message is not None:
                    await self._queue(message)
            elif type(event) is Ping:
                if len(pings) > PING_FLOOD:
                    pings[-1] = event
                else:
                    pings.append(event)
                self._offer(PingMessage(bytes(event.payload)))
            elif type(event) is Pong:
                self._pong.set()
                self._offer(PongMessage(bytes(event.payload)))
            elif type(event) is CloseConnection:
                await self._on_close(event)
                return
        if pings and self._ws.state is ConnectionState.OPEN:
            answered = pings if len(pings) <= PING_FLOOD else pings[-1:]
            await self._send_event(*[ping.response() for ping in answered])

    async def _queue(self, message: Message) -> None:
        """Hand a data message to the handler (or drop it once the handler has finished)."""
        if not self._discard:
            if not self._inbox.put_nowait(message):  # the queue is full
                await self._deliver(message)
            self._queued += 1

    async def _deliver(self, message: Message) -> None:
        """Wait for room in the full queue (the handler is behind): meanwhile nothing is read,
        and TCP flow control slows the peer down."""
        self._reader_waits = True
        try:
            await self._inbox.put(message)
        finally:
            self._reader_waits = False

    def _offer(self, message: Message) -> None:
        """Deliver a control message if the queue has room (they are never worth blocking
        the reader for)."""
        with suppress(trio.ClosedResourceError):
            if self._inbox.put_nowait(message):
                self._queued += 1

    async def _on_close(self, event: CloseConnection) -> None:
        code, reason = int(event.code), event.reason or ""
        state = self._ws.state
        if state is ConnectionState.REMOTE_CLOSING:  # the peer started the closing handshake
            self._stop_receiving(code, reason)
            await self._let_handler_catch_up()
            await self._send_event(event.response())  # the same code, echoed
            self._end(code, reason, Close(code, reason))
        elif state is ConnectionState.CLOSED:  # the peer's reply to our Close
            self._end(code, reason, Close(code, reason))
        else:  # wsproto reports a protocol error as a Close it "received" in OPEN state
            await self._fail(code, reason)

    async def _let_handler_catch_up(self) -> None:
        """Before the server's Close: give the handler up to ``websocket_close_timeout`` to
        take the messages queued so far and ask for the next one (or to finish), so that its
        replies to them go out first. No wait when it has nothing left to answer."""
        behind = self._queued and self._asked <= self._queued  # a message not yet answered
        if behind and not self._discard:
            self._caught_up = trio.Event()
            self._reader_waits = True
            try:
                with trio.move_on_after(self._options.websocket_close_timeout):
                    await self._caught_up.wait()
            finally:
                self._reader_waits = False

    async def _fail(self, code: int, reason: str) -> None:
        """A protocol error or an oversized message: send Close with ``code`` (best effort),
        then drop the TCP connection. Nothing more is read, but the handler first answers the
        messages that came before the bad frame (``_let_handler_catch_up``)."""
        await self._let_handler_catch_up()
        with trio.move_on_after(self._options.websocket_close_timeout):
            if self._ws.state is ConnectionState.OPEN:
                short = reason.encode()[:120].decode(errors="ignore")
                with suppress(WebSocketClosed):
                    await self._send_event(CloseConnection(code=code, reason=short))
            else:  # the handler's or shutdown's Close may be mid-write: let it finish first
                async with self._send_lock:
                    pass
        await self._abort(code, reason, Close(code, reason))

    # -- keep-alive -----------------------------------------------------------------------------
    async def _keepalive(self) -> None:
        """Ping every ``websocket_ping_interval``; a peer that does not answer within
        ``websocket_ping_timeout`` is dropped (unless the reader is only waiting for the
        handler, to read or to answer before a Close: backpressure, not a dead peer)."""
        options = self._options
        next_ping = trio.current_time() + options.websocket_ping_interval
        while True:
            await trio.sleep_until(next_ping)
            if self._ws.state is not ConnectionState.OPEN:
                return
            # Counted from this ping, not from its pong: one ping per interval.
            next_ping = trio.current_time() + options.websocket_ping_interval
            self._pong = trio.Event()
            try:
                await self._send_event(Ping(payload=_KEEPALIVE_PAYLOAD))
            except WebSocketClosed:
                return
            with trio.move_on_after(options.websocket_ping_timeout):
                await self._pong.wait()
            if not self._pong.is_set() and not self._reader_waits:
                log.info("WebSocket peer did not answer a ping in time: dropping it")
                await self._abort(1006, "keepalive ping timeout", Close(1006, ""))
                return


def _only_closed(error: Exception) -> bool:
    """An exception group (from a nursery in the handler) holding nothing but
    ``WebSocketClosed``: the connection ended under the handler's tasks, not a bug."""
    return isinstance(error, ExceptionGroup) and error.split(WebSocketClosed)[1] is None
