"""``Transport``: how an HTTP/1.1 connection reads and writes its stream.

On plain TCP (a ``trio.SocketStream``) it calls the socket itself, non-blocking, and goes
through trio only to wait: a read whose bytes have arrived, or a write the socket buffer
takes whole, costs no trip through trio's stream and socket layers and needs no deadline (the
caller sets its deadline only before a real wait: ``receive_now`` and ``send_now`` never
wait). Any other stream (TLS, in-memory, a stream handed to ``Server.handle_stream``) is read
and written through its own ``receive_some`` and ``send_all``; for those ``receive_now``
finds nothing and ``send_now`` sends nothing, so every read and write waits, with its
deadline set.

Neither ``receive_now`` nor ``send_now`` is a checkpoint: the connection's request loop
passes one once per request (``HTTP1Connection``), so a client that pipelines requests
cannot keep the other tasks from running, and a cancellation is delivered there.
"""

from __future__ import annotations

import os
import socket

import trio

from .._files.body import FileChanged

__all__ = ["RECEIVE_SIZE", "Transport"]

RECEIVE_SIZE = 64 * 1024
#: The most one ``os.sendfile`` call is asked to send.
SENDFILE_SIZE = 4 * 1024 * 1024
_HAS_SENDFILE = hasattr(os, "sendfile")


class Transport:
    """Reads and writes ``stream``. One task reads at a time (``http1.reader.StreamReader``), one
    task writes at a time (the connection's). ``close`` must be called before the stream is
    closed."""

    __slots__ = ("_socket", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._socket: socket.socket | None = None
        if type(stream) is trio.SocketStream and stream.socket.fileno() != -1:
            # The same file descriptor as a standard socket object: trio owns and closes the
            # descriptor, this object only borrows it (``close`` detaches it). A stream closed
            # already has none: it is read through trio, which reports it closed.
            direct = socket.socket(fileno=stream.socket.fileno())
            direct.setblocking(False)
            self._socket = direct

    def close(self) -> None:
        """Stop using the socket directly (the stream itself stays open): call before the
        stream is closed, so the descriptor is never used after trio closed it."""
        direct, self._socket = self._socket, None
        if direct is not None:
            direct.detach()

    # -- reading ------------------------------------------------------------------------------
    def receive_now(self) -> bytes | None:
        """The bytes that have arrived, without waiting: ``b""`` when the peer closed its side
        (or the connection broke), ``None`` when nothing is there yet (always, for a stream
        that can only be read by waiting)."""
        direct = self._socket
        if direct is None:
            return None
        try:
            return direct.recv(RECEIVE_SIZE)
        except BlockingIOError:
            return None
        except OSError:  # reset by the peer, or closed under us
            return b""

    async def receive(self) -> bytes | bytearray:
        """Wait for bytes and return them; ``b""`` at the end of the stream or when it broke.
        Cancellation: a checkpoint (nothing is lost)."""
        direct = self._socket
        if direct is None:
            try:
                return await self.stream.receive_some(RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return b""
        while True:
            try:
                await trio.lowlevel.wait_readable(direct)
            except trio.ClosedResourceError:
                return b""
            data = self.receive_now()
            if data is not None:
                return data

    # -- writing ------------------------------------------------------------------------------
    def send_now(self, data: bytes | bytearray | memoryview) -> int:
        """Send what the socket takes without waiting; returns how many bytes of ``data`` it
        took (0 for a stream that can only be written by waiting). ``BrokenResourceError``
        when the peer is gone."""
        direct = self._socket
        if direct is None:
            return 0
        try:
            return direct.send(data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise trio.BrokenResourceError(str(exc)) from exc

    @property
    def can_send_files(self) -> bool:
        """Whether :meth:`send_file` may be used: plain TCP (``os.sendfile`` needs the
        socket; TLS and in-memory streams are written through the stream)."""
        return self._socket is not None and _HAS_SENDFILE

    async def send_file(self, fd: int, offset: int, length: int) -> None:
        """Send ``length`` bytes of the file ``fd`` from ``offset`` with ``os.sendfile``
        (zero copy), each call in a worker thread (a file not in the page cache makes it
        read from the disk), waiting for the socket in between. ``BrokenResourceError``
        when the peer is gone; ``FileChanged`` when the file got shorter. Only when
        :attr:`can_send_files`. Cancellation: a checkpoint while waiting for the socket."""
        direct = self._socket
        assert direct is not None
        socket_fd = direct.fileno()
        end = offset + length
        while offset < end:
            try:
                sent = await trio.to_thread.run_sync(
                    os.sendfile, socket_fd, fd, offset, min(end - offset, SENDFILE_SIZE)
                )
            except BlockingIOError:
                sent = -1
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from exc
            if sent == 0:
                raise FileChanged(f"the file ended {end - offset} bytes early")
            if sent > 0:
                offset += sent
            if offset < end:
                await trio.lowlevel.wait_writable(direct)

    async def send_all(self, data: bytes, sent: int = 0) -> None:
        """Send ``data`` from offset ``sent`` on, waiting for the socket as long as it takes
        (the caller bounds the time). ``BrokenResourceError`` or ``ClosedResourceError`` when
        the peer or the stream is gone. Cancellation: a checkpoint; part of ``data`` may have
        been sent."""
        direct = self._socket
        if direct is None:
            await self.stream.send_all(data[sent:] if sent else data)
            return
        view = memoryview(data)
        while sent < len(data):
            await trio.lowlevel.wait_writable(direct)
            with view[sent:] as rest:
                sent += self.send_now(rest)
