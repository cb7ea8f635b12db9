"""``FrameMeter``: what a client's HTTP/2 frames cost the server, measured before h2 parses
them, and the flood rules that end a connection with GOAWAY(ENHANCE_YOUR_CALM).

h2 enforces frame sizes, header list sizes and the protocol's state machines, but a client can
keep a server busy within all of them: PINGs and SETTINGS that each cost an answer, streams
opened and reset at once (CVE-2023-44487), malformed frames the server must reset a stream for
(CVE-2025-8671), a header block dribbled out in CONTINUATION frames (CVE-2024-27316), empty
DATA, WINDOW_UPDATE and PRIORITY frames. The meter reads only the 9-byte frame headers (in
linear time, skipping payloads) and keeps one account per connection:

- *overhead*: every frame that does no work for a request (PING, SETTINGS past the first,
  SETTINGS acknowledgements past the first, WINDOW_UPDATE, PRIORITY, RST_STREAM, empty DATA
  frames that do not end a stream, frames of unknown type) and every RST_STREAM the server
  had to send (a stream refused, malformed or failed, a stream opened after the server's
  GOAWAY, a DATA or HEADERS frame on a closed stream: ``charge``);
- *work*: every response the server completed, every DATA frame it sent, and every piece of
  request body a handler read (``credit``: body that is sent and never read earns nothing, so
  one byte of DATA cannot pay for a reset).

The connection is a flood once ``overhead > allowance + 2 * work``. A browser or an API client
stays far below: it sends a handful of control frames per connection and about one
WINDOW_UPDATE per DATA frame it receives at most. A header block is also bounded on its own:
at most ``max_continuation_frames`` CONTINUATION frames and ``max_block_size`` bytes.

A frame whose header announces more than ``max_frame_size`` (the SETTINGS_MAX_FRAME_SIZE the
server announced) is refused from its header (``FrameTooLarge``), before h2 would buffer its
payload whole to check it. And ``scan`` reads at most ``slice_frames`` frame headers at a
time, so that the work one read can start is metered and handed to h2 a bounded slice at a
time. Nothing here imports trio or h2.
"""

from __future__ import annotations

__all__ = ["Flood", "FrameMeter", "FrameTooLarge"]

PREFACE_SIZE = 24  # b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", parsed by h2
FRAME_HEADER_SIZE = 9

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS = 0, 1, 2, 3, 4
PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 5, 6, 7, 8, 9
END_STREAM = ACK = 0x1
END_HEADERS = 0x4

#: Frame types that are pure overhead whatever their flags.
_CONTROL = frozenset({PRIORITY, RST_STREAM, PING, WINDOW_UPDATE})
_KNOWN = frozenset(range(10))


class Flood(Exception):
    """The client floods the connection; ``str()`` says with what (for the log and GOAWAY's
    debug data)."""


class FrameTooLarge(Exception):
    """A frame header announces a payload above the server's SETTINGS_MAX_FRAME_SIZE;
    ``str()`` says how large."""


class FrameMeter:
    """The account of one connection's inbound frames (see the module docstring)."""

    def __init__(
        self,
        *,
        allowance: int,
        max_continuation_frames: int,
        max_block_size: int,
        max_frame_size: int,
        slice_frames: int,
    ):
        self.allowance = allowance
        self.max_continuation_frames = max_continuation_frames
        self.max_block_size = max_block_size
        self.max_frame_size = max_frame_size
        self.slice_frames = slice_frames
        self.overhead = 0
        self.work = 0
        self._skip = PREFACE_SIZE  # bytes still to pass before the next frame header
        self._partial = b""  # the start of a frame header split across reads
        self._settings = 0  # non-ACK SETTINGS frames seen
        self._settings_acks = 0
        self._continuations = -1  # CONTINUATIONs in the open header block; -1: none open
        self._block_size = 0

    @property
    def in_header_block(self) -> bool:
        """True between a HEADERS frame without END_HEADERS and the block's last frame."""
        return self._continuations >= 0

    def scan(self, data: bytes | bytearray, start: int = 0) -> int:
        """Account for the next frames of ``data`` (bytes from the client) from ``start``,
        at most ``slice_frames`` frame headers; return where the slice they make ends: the
        first byte of the next frame, or the end of ``data``. Raises ``Flood`` or
        ``FrameTooLarge`` as soon as a rule is broken, before the rest of ``data`` is
        looked at."""
        frames = 0
        position, size = start, len(data)
        while position < size:
            if self._skip:
                step = min(self._skip, size - position)
                self._skip -= step
                position += step
                continue
            if frames == self.slice_frames:
                return position
            header: bytes | bytearray
            if self._partial or size - position < FRAME_HEADER_SIZE:
                need = FRAME_HEADER_SIZE - len(self._partial)
                if size - position < need:
                    self._partial += data[position:]
                    return size
                header = self._partial + data[position : position + need]
                self._partial = b""
                position += need
            else:  # (the usual: the whole frame header in this read)
                header = data[position : position + FRAME_HEADER_SIZE]
                position += FRAME_HEADER_SIZE
            frames += 1
            length = int.from_bytes(header[:3], "big")
            if length > self.max_frame_size:
                raise FrameTooLarge(f"a frame of {length} bytes, above {self.max_frame_size}")
            kind, flags = header[3], header[4]
            if self._continuations >= 0 or not (
                (kind == DATA and length) or (kind == HEADERS and flags & END_HEADERS)
            ):  # (body, or a whole head: nothing to count)
                self._frame(kind, flags, length)
            if position + length <= size:  # (the payload is here: skipped at once)
                position += length
            else:
                self._skip, position = position + length - size, size
        return size

    def charge(self, count: int = 1) -> None:
        """The server reset ``count`` streams it did not want to (refused, malformed,
        failed, or a frame on a closed stream answered); the next ``check`` (or ``scan``)
        judges the account."""
        self.overhead += count

    def credit(self, count: int = 1) -> None:
        """The server did ``count`` pieces of work for the client (a response completed, a
        DATA frame sent, a piece of body read by a handler)."""
        self.work += count

    def _frame(self, kind: int, flags: int, length: int) -> None:
        if self._continuations >= 0:  # inside a header block: only its CONTINUATIONs (h2
            if kind == CONTINUATION:  # refuses anything else)
                self._continuation(flags, length)
            return
        if kind == DATA:
            if not length and not flags & END_STREAM:
                self._cost()
        elif kind in (HEADERS, PUSH_PROMISE):
            if not flags & END_HEADERS:
                self._continuations, self._block_size = 0, length
                self._check_block()
        elif kind in _CONTROL or kind not in _KNOWN:
            self._cost()
        elif kind == SETTINGS:
            if flags & ACK:
                self._settings_acks += 1
                if self._settings_acks > 1:
                    self._cost()
            else:
                self._settings += 1
                if self._settings > 1:
                    self._cost()

    def _continuation(self, flags: int, length: int) -> None:
        self._continuations += 1
        self._block_size += length
        if self._continuations > self.max_continuation_frames:
            raise Flood(f"a header block in more than {self.max_continuation_frames} frames")
        self._check_block()
        if flags & END_HEADERS:
            self._continuations = -1

    def _check_block(self) -> None:
        if self._block_size > self.max_block_size:
            raise Flood(f"a header block larger than {self.max_block_size} bytes")

    def _cost(self) -> None:
        self.overhead += 1
        self.check()

    def check(self) -> None:
        """Raise ``Flood`` when the overhead is past the allowance."""
        if self.overhead > self.allowance + 2 * self.work:
            raise Flood(f"{self.overhead} frames or resets doing no work, {self.work} doing some")
