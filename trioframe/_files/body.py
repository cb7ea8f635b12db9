"""``FileBody``: the body of a file response, as pieces of an open file and framing bytes.

A body is a list of pieces: ``bytes`` (a ``multipart/byteranges`` part header, say) and
``(offset, length)`` spans of the file. Iterated, it yields the bytes and reads each span in
chunks of at most ``CHUNK_SIZE`` in a worker thread (``os.pread``), one chunk ahead of
nothing: the server asks for the next chunk only once the previous one was handed to the
socket, so memory stays at one chunk whatever the file's size. The HTTP/1.1 server on plain
TCP instead sends each span with ``os.sendfile`` (``pieces`` and ``fd`` are public for that).

The descriptor is closed by ``aclose`` (the server always calls it: after the last piece, when
the client goes away, for a ``HEAD``), or at the latest when the body is collected.
"""

from __future__ import annotations

import os

import trio

__all__ = ["CHUNK_SIZE", "FileBody", "FileChanged", "Piece"]

#: The largest read from the file at a time.
CHUNK_SIZE = 64 * 1024

Piece = bytes | tuple[int, int]


class FileChanged(OSError):
    """The file got shorter while it was being sent (the response cannot be completed)."""


class FileBody:
    """An async iterator of the ``bytes`` of ``pieces``, reading spans of ``fd``.

    Cancellation: a read in progress finishes in its thread (it is short) before the
    cancellation is delivered; the descriptor stays open until ``aclose``."""

    def __init__(self, fd: int, pieces: list[Piece]) -> None:
        self.fd = fd
        self.pieces = pieces
        self._index = 0
        self._offset = 0  # within the current span
        self._closed = False

    def __aiter__(self) -> FileBody:
        return self

    async def __anext__(self) -> bytes:
        while self._index < len(self.pieces):
            piece = self.pieces[self._index]
            if isinstance(piece, bytes):
                self._index += 1
                return piece
            start, length = piece
            if self._offset >= length:
                self._index += 1
                self._offset = 0
                continue
            size = min(CHUNK_SIZE, length - self._offset)
            chunk = await read_span(self.fd, start + self._offset, size)
            self._offset += len(chunk)
            return chunk
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (once)."""
        if not self._closed:
            self._closed = True
            os.close(self.fd)

    def __del__(self) -> None:
        self.close()


async def read_span(fd: int, offset: int, size: int) -> bytes:
    """``size`` bytes of ``fd`` at ``offset``, read in a worker thread. ``FileChanged`` when
    the file has fewer."""
    chunk = await trio.to_thread.run_sync(os.pread, fd, size, offset)
    if len(chunk) < size:
        raise FileChanged(f"the file ended {size - len(chunk)} bytes early")
    return chunk
