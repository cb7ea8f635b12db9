"""Strict framing of a chunked request body, checked before h11 decodes it.

h11 decodes chunked bodies but is lenient where a front server must not be: it accepts a bare
LF ending a trailer line or the trailer section, obs-fold and control characters in trailer
lines, any byte but LF inside a chunk extension, and whitespace after the chunk size. A proxy
in front that reads such bytes differently sees the body end somewhere else, and the bytes
between the two ends become a request it never checked (request smuggling).

:class:`ChunkedFraming` walks the same bytes by the grammar of RFC 9112 section 7.1 and tells
the adapter how many of them are checked; the adapter feeds h11 exactly those, so h11 never
sees a byte the grammar refuses, nor one past the body's end::

    chunked-body   = *chunk last-chunk trailer-section CRLF
    chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
    chunk-size     = 1*HEXDIG                                  (here: at most 16 digits)
    chunk-ext      = *( BWS ";" BWS name [ BWS "=" BWS value ] )   (value: token / quoted-string;
                                                   no BWS before the first ";", as in h11)
    trailer-section = *( field-line CRLF )                     (field-line as in a head)

Linear time: chunk data is skipped by counting, and a line's end is searched with
``bytes.find`` from where the previous search stopped. Bounded: a chunk-size line (with its
extensions) is at most ``max_request_line_size`` bytes (400 past it); the trailer section,
its final CRLF included, has the limits of a head: ``max_head_size`` bytes and
``max_header_count`` field lines (431 past them, as for the head: the same settings give the
same status).
"""

from __future__ import annotations

import enum
import re

from .._http.grammar import OBS_TEXT, QDTEXT, QUOTED_PAIR_TEXT, TCHAR
from .errors import ProtocolError
from .head import HeadLimits

__all__ = ["ChunkedFraming"]

_TOKEN = f"{TCHAR}++".encode("ascii")
_QUOTED = rf'"(?:[{QDTEXT}{OBS_TEXT}]|\\[{QUOTED_PAIR_TEXT}{OBS_TEXT}])*+"'.encode("ascii")
_EXTENSION = rb"%s(?:[ \t]*+=[ \t]*+(?:%s|%s))?" % (_TOKEN, _TOKEN, _QUOTED)
# No whitespace between the size and the first ";": RFC 9112 allows BWS there, h11 does not,
# and both HTTP/1.1 paths hold to the stricter rule.
_SIZE_LINE_RE = re.compile(
    rb"([0-9A-Fa-f]{1,16}+)(?:;[ \t]*+%s(?:[ \t]*+;[ \t]*+%s)*+)?" % (_EXTENSION, _EXTENSION)
)
# field-name ":" OWS field-value OWS: after the colon, any run of SP, HTAB, VCHAR, obs-text.
_FIELD_LINE = re.compile(rb"%s:[\t\x20-\x7e\x80-\xff]*+" % _TOKEN)
_CRLF = b"\r\n"
_SIZE_LINE_TOO_LONG = (400, "chunk-size line too long")
_TRAILER_TOO_LARGE = (431, "trailer section too large")


class _Part(enum.Enum):
    """What the next bytes of the body are."""

    SIZE_LINE = "a chunk-size line"
    DATA = "chunk data"
    DATA_END = "the CRLF after chunk data"
    TRAILER = "a trailer field line or the final CRLF"
    DONE = "nothing: the body has ended"


# Module-level names: a global is much cheaper to look up than an enum member, and ``check``
# runs once per chunk.
_SIZE_LINE = _Part.SIZE_LINE
_DATA = _Part.DATA
_DATA_END = _Part.DATA_END
_TRAILER = _Part.TRAILER
_DONE = _Part.DONE


class ChunkedFraming:
    """The framing state of one chunked body. Call :meth:`check` with the body bytes not yet
    released (they start where the previous release ended); it raises ``ProtocolError`` for
    bytes the grammar refuses and returns how many leading bytes are checked and may be
    handed on."""

    def __init__(self, limits: HeadLimits) -> None:
        self._max_line = limits.max_request_line_size
        self._max_trailer_size = limits.max_head_size
        self._max_trailer_count = limits.max_header_count
        self._part = _SIZE_LINE
        self._data_left = 0  # bytes of the current chunk's data not seen yet
        self._searched = 0  # bytes of the pending line searched for its LF without finding it
        self._held = 0  # trailer bytes checked but held back until the section is complete
        self._trailer_count = 0

    @property
    def done(self) -> bool:
        """True once the body's last byte has been released."""
        return self._part is _DONE

    def check(self, pending: bytes | bytearray, pieces: list[tuple[int, int]] | None = None) -> int:
        """How many bytes at the start of ``pending`` are checked body bytes: chunk data as it
        arrives, complete chunk-size lines and CRLFs, and the trailer section only once it is
        complete (so whoever decodes it gets it whole). Never counts a byte past the body.
        With ``pieces``, the ``(start, end)`` offsets of the chunk data among the counted
        bytes are appended to it: a decoder takes the body from there.

        One pass of the loop takes a whole chunk (size line, data, CRLF) when it is there;
        each part returns when its bytes have not all arrived yet."""
        size = len(pending)
        released = 0
        while True:
            part = self._part
            if part is _SIZE_LINE:
                line_end = self._line_end(pending, released, self._max_line, _SIZE_LINE_TOO_LONG)
                if line_end == -1:
                    return released
                match = _SIZE_LINE_RE.fullmatch(pending, released, line_end)
                if match is None:
                    raise ProtocolError(400, "malformed chunk-size line")
                released = line_end + 2
                self._data_left = int(match[1], 16)
                if not self._data_left:
                    self._part = _TRAILER
                    continue
                part = self._part = _DATA
            if part is _DATA:
                if self._data_left > size - released:
                    if pieces is not None and size > released:
                        pieces.append((released, size))
                    self._data_left -= size - released
                    return size
                if pieces is not None:
                    pieces.append((released, released + self._data_left))
                released += self._data_left
                self._data_left = 0
                part = self._part = _DATA_END
            if part is _DATA_END:
                crlf = pending[released : released + 2]
                if crlf != _CRLF:
                    if crlf != _CRLF[: len(crlf)]:
                        raise ProtocolError(400, "chunk data not followed by CRLF")
                    return released  # the rest of the CRLF has not arrived
                released += 2
                self._part = _SIZE_LINE
            elif part is _TRAILER:
                if not self._check_trailer_line(pending, released):
                    return released
            elif part is _DONE:  # release the trailer section, held until the body's end
                held, self._held = self._held, 0
                return released + held

    def _check_trailer_line(self, pending: bytes | bytearray, released: int) -> bool:
        """Check the next trailer line (after the held ones); False while it is incomplete.
        The empty line ends the body."""
        start = released + self._held
        limit = self._max_trailer_size - self._held - 2
        line_end = self._line_end(pending, start, limit, _TRAILER_TOO_LARGE)
        if line_end == -1:
            return False
        self._held += line_end + 2 - start
        if line_end == start:
            self._part = _DONE
            return True
        if _FIELD_LINE.fullmatch(pending, start, line_end) is None:
            raise ProtocolError(400, "malformed trailer field line")
        self._trailer_count += 1
        if self._trailer_count > self._max_trailer_count:
            raise ProtocolError(431, "too many trailer fields")
        if self._held + 2 > self._max_trailer_size:  # no room left for the final CRLF
            raise ProtocolError(*_TRAILER_TOO_LARGE)
        return True

    def _line_end(
        self, pending: bytes | bytearray, start: int, limit: int, too_long: tuple[int, str]
    ) -> int:
        """Where the CRLF ending the line at ``start`` is, or -1 while it has not arrived. The
        line (without its CRLF) may be at most ``limit`` bytes, else ``too_long`` is the
        error; a bare LF is refused."""
        end = pending.find(b"\n", start + self._searched, start + limit + 2)
        if end == -1:
            if len(pending) - start >= limit + 2:
                raise ProtocolError(*too_long)
            self._searched = len(pending) - start
            return -1
        self._searched = 0
        if end == start or pending[end - 1] != 13:  # 13: CR
            raise ProtocolError(400, "bare LF in chunked body framing")
        return end - 1
