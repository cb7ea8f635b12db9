"""Strict checks on a raw HTTP/1.1 request head, before h11 parses it.

h11 is lenient in places where a front server must not be (it unfolds obs-fold, accepts
control characters in values and bare LF line ends, merges duplicate Content-Length, accepts
Transfer-Encoding on HTTP/1.0, a fragment in the target and an absolute-form target without a
host, and only limits the head size across reads). ``check_head`` runs once per head on the
complete head bytes; ``HeadScanner`` finds the head's end and refuses a partial head as soon as
it cannot become valid. ``check_target`` holds a request target (HTTP/1.1's, HTTP/2's
``:path``) to the rules both protocols share. Each failure is a ``ProtocolError`` with its
status.
"""

from __future__ import annotations

import re

import attrs

from .errors import ProtocolError

__all__ = [
    "MAX_CONTENT_LENGTH_DIGITS",
    "HeadLimits",
    "HeadScanner",
    "absolute_form_authority",
    "byte_class",
    "check_head",
    "check_host",
    "check_target",
]


def byte_class(allowed: bytes) -> bytes:
    """A translation table that maps the bytes of ``allowed`` to 1 and every other byte to 0:
    ``0 in data.translate(table)`` finds a byte outside ``allowed`` in two C passes."""
    # Cheaper than ``data.translate(None, allowed)``, which builds its table from ``allowed``
    # on every call: some 1,200 instructions for a class of 250 bytes.
    return bytes(1 if byte in allowed else 0 for byte in range(256))


# Bytes a head may hold: HTAB, CR, LF, visible ASCII and space, obs-text; the others are
# control characters and DEL.
_ALLOWED_BYTES = bytes([9, 10, 13, *range(0x20, 0x7F), *range(0x80, 0x100)])
_ALLOWED = byte_class(_ALLOWED_BYTES)
# check_head's one pass over a whole head: a forbidden byte becomes 0, HTAB becomes SP (a
# folded line starts with either), upper-case ASCII becomes lower case (field names are
# compared without case), any other byte stays.
_NORMALIZE = bytes(
    (0 if byte not in _ALLOWED_BYTES else 0x20 if byte == 9 else byte)
    for byte in bytes(range(256)).lower()
)
_VERSION = re.compile(rb"HTTP/(\d)\.(\d)")
_HEAD_END = b"\r\n\r\n"
_ABSOLUTE_FORM = re.compile(rb"https?://([^/?#]*)")  # group 1: the authority
# RFC 9112 section 3.2 / RFC 3986 section 3.2.2: Host = uri-host [ ":" port ], uri-host an
# IP-literal or a reg-name (empty allowed); anything else is a 400.
_SIMPLE_HOST = byte_class(b"-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HOST = re.compile(
    rb"(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?"
)
#: The most digits a Content-Length may have, leading zeros included (h11's rule: 20 digits
#: hold any length up to 10**20 - 1; more is a 400). Never more digits for ``int`` to read.
MAX_CONTENT_LENGTH_DIGITS = 20
# A request target holds visible ASCII only. The bytes it may hold without a closer look
# (``_check_unusual_target``): visible ASCII but "#" (a fragment: never part of a request
# target) and "%" (an escape, which may be "%00").
_VISIBLE = byte_class(bytes(range(0x21, 0x7F)))
_PLAIN_TARGET = byte_class(bytes(byte for byte in range(0x21, 0x7F) if byte not in b"#%"))


@attrs.frozen
class HeadLimits:
    """Size limits for a request head (see ``ServerConfig``). A chunked body's lines use
    them too: a chunk-size line is at most ``max_request_line_size`` bytes, and its trailer
    section at most ``max_head_size`` bytes and ``max_header_count`` fields."""

    max_head_size: int = 16 * 1024
    max_request_line_size: int = 8 * 1024
    max_header_count: int = 100


class HeadScanner:
    """Finds the end of a request head in a buffer that grows one read at a time, and
    refuses a partial head as soon as its bytes break a rule: a bare CR or LF or a forbidden
    character (400), a request line longer than its limit (414), a head larger than its limit
    (431). Each byte is scanned once, so a head arriving a byte per read costs linear time.

    The buffer must only grow between calls; call :meth:`restart` when bytes are removed
    from its start (the caller drops empty lines before a request) or a new head begins."""

    __slots__ = ("_line_ended", "_scanned", "limits")

    def __init__(self, limits: HeadLimits) -> None:
        self.limits = limits
        self._scanned = 0  # bytes at the start of the buffer already scanned
        self._line_ended = False  # the request line's CR was seen within its limit

    def restart(self) -> None:
        """Forget the scan: the next call starts at the first byte of the buffer."""
        self._scanned = 0
        self._line_ended = False

    def find_end(self, buffer: bytes | bytearray) -> int:
        """The length of the complete head at the start of ``buffer`` (through its CRLF CRLF),
        or 0 while it is incomplete. A complete head is not checked here (``check_head`` does
        that); bytes after it are not looked at. Raises ``ProtocolError``."""
        start = self._scanned
        end = buffer.find(_HEAD_END, start - 3 if start > 3 else 0)
        if end != -1:
            self._scanned = 0  # (``restart``, inline: once per head)
            self._line_ended = False
            return end + 4
        limits = self.limits
        size = len(buffer)
        if size > limits.max_head_size:
            raise ProtocolError(431, "request head too large")
        if not self._line_ended:
            if buffer.find(b"\r", start, limits.max_request_line_size + 1) != -1:
                self._line_ended = True
            elif size > limits.max_request_line_size:
                raise ProtocolError(414, "request line too long")
        if 0 in buffer[start:].translate(_ALLOWED):
            raise ProtocolError(400, "invalid characters in request head")
        # Every LF at or after ``start`` must follow a CR, and every CR before the last byte
        # must precede an LF (a CR as the last byte is checked once the next byte arrives).
        before = max(start - 1, 0)
        line_breaks = buffer.count(b"\r\n", before)
        if (
            buffer.count(b"\n", start) != line_breaks
            or buffer.count(b"\r", before, size - 1) != line_breaks
        ):
            raise ProtocolError(400, "bare CR or LF in request head")
        self._scanned = size
        return 0


def check_head(head: bytes, limits: HeadLimits) -> list[bytes]:
    """Validate a complete head (request line through the final CRLF CRLF); returns the
    request line's three parts: method, target, version."""
    if len(head) > limits.max_head_size:
        raise ProtocolError(431, "request head too large")
    line = head.partition(b"\r\n")[0]  # (partition takes one argument: cheaper than find)
    if len(line) > limits.max_request_line_size:
        raise ProtocolError(414, "request line too long")
    # The bytes first, in the order ``HeadScanner`` checks them as they arrive, so a head that
    # breaks several rules gets the same answer however its bytes were cut into reads.
    norm = head.translate(_NORMALIZE)
    if 0 in norm:
        raise ProtocolError(400, "invalid characters in request head")
    rest = norm.replace(b"\r\n", b"")
    if 13 in rest or 10 in rest:  # 13, 10: CR, LF
        raise ProtocolError(400, "bare CR or LF in request head")
    parts = line.split(b" ")
    if len(parts) != 3 or not all(parts):
        raise ProtocolError(400, "malformed request line")
    method, target, version = parts
    if version == b"HTTP/1.1":  # nearly every request: no pattern to match
        is_http10 = False
    else:
        match = _VERSION.fullmatch(version)
        if match is None:
            raise ProtocolError(400, "malformed HTTP version")
        if match.group(1) != b"1":
            raise ProtocolError(505, "HTTP version not supported on this connection")
        is_http10 = match.group(2) == b"0"
    if 0 in target.translate(_PLAIN_TARGET):  # (check_target, inline: one call less)
        _check_unusual_target(target)
    if not target.startswith(b"/"):
        _check_absolute_form(target)
    if method == b"CONNECT":  # a tunnel (with a target h11 would accept): not served here
        raise ProtocolError(501, "CONNECT is not supported")
    line_breaks = (len(norm) - len(rest)) // 2
    # The substring tests on a str copy: in CPython 3.11 ``sub in data`` on bytes first tries
    # ``sub`` as an integer (raising and clearing a TypeError, 2,400 instructions) and
    # ``data.find(sub)`` parses its arguments (1,300); ``sub in text`` costs some 500.
    text = norm.decode("latin-1")
    if "\r\n " in text:  # HTAB is SP here
        raise ProtocolError(400, "obsolete line folding in header")
    if line_breaks - 2 > limits.max_header_count:
        raise ProtocolError(431, "too many header fields")
    has_length = "\r\ncontent-length:" in text
    has_coding = "\r\ntransfer-encoding:" in text
    if has_length or has_coding:
        _check_framing(text, has_length, has_coding, is_http10)
    return parts


_VALID_HOSTS: set[bytes] = set()
_MAX_VALID_HOSTS = 256  # the set starts over when full (a client may send any name)


def check_host(value: bytes) -> None:
    """A ``Host`` header value must be ``host[:port]`` (RFC 9112 section 3.2: else 400)."""
    # The common value (a name or IPv4 address of letters, digits, dots and hyphens, with an
    # optional port) is accepted without the pattern, which costs some 300 instructions a
    # byte; what it accepts is a subset of what the pattern accepts. A value that passed is
    # remembered: the next request with it costs one set lookup.
    if value in _VALID_HOSTS:  # a server sees few names: each is checked once
        return
    host, colon, port = value.rpartition(b":")
    if not colon:
        host, port = port, b""
    simple = 0 not in host.translate(_SIMPLE_HOST) and (not port or port.isdigit())
    if not simple and _HOST.fullmatch(value) is None:
        raise ProtocolError(400, "invalid Host header")
    if len(_VALID_HOSTS) >= _MAX_VALID_HOSTS:
        _VALID_HOSTS.clear()
    _VALID_HOSTS.add(value)


def check_target(target: bytes) -> None:
    """A request target (HTTP/1.1's request-target, HTTP/2's ``:path``) holds visible ASCII
    only (RFC 9112 section 3.2, RFC 3986), no fragment (a request target has none: the client
    keeps it) and no percent-encoded NUL (``%00``: the path or a query value would carry a NUL,
    where C libraries, file systems and databases end a string). Raises ``ProtocolError``
    (400). Costs one table scan when the target has no ``#`` and no ``%``."""
    if 0 in target.translate(_PLAIN_TARGET):
        _check_unusual_target(target)


def _check_unusual_target(target: bytes) -> None:
    """``check_target`` for a target with a byte other than visible ASCII, a ``#`` or a ``%``."""
    if 0 in target.translate(_VISIBLE):
        raise ProtocolError(400, "invalid characters in the request target")
    if 35 in target:  # "#"
        raise ProtocolError(400, "fragment in the request target")
    if target.find(b"%00") != -1:
        raise ProtocolError(400, "percent-encoded NUL in the request target")


def absolute_form_authority(target: bytes) -> bytes:
    """The authority (``host[:port]``) of an absolute-form ``target`` ``check_head`` passed."""
    match = _ABSOLUTE_FORM.match(target)
    assert match is not None  # check_head refuses other targets
    return match[1]


def _check_absolute_form(target: bytes) -> None:
    """An absolute-form target names a host (RFC 9110 4.2.1: a URI with an empty host must be
    rejected) and carries no userinfo (4.2.4 advises treating it as an error); its authority
    is valid as a ``Host`` value, since the server takes it as the request's Host (RFC 9112
    section 3.2.2)."""
    match = _ABSOLUTE_FORM.match(target)
    if match is None:
        raise ProtocolError(400, "request target must be in origin-form or absolute-form")
    authority = match[1]
    if b"@" in authority:
        raise ProtocolError(400, "userinfo in the request target")
    host = authority if authority.startswith(b"[") else authority.partition(b":")[0]
    if not host:
        raise ProtocolError(400, "absolute-form request target without a host")
    if _HOST.fullmatch(authority) is None:
        raise ProtocolError(400, "invalid host in the request target")


def _check_framing(lower_head: str, has_length: bool, has_coding: bool, is_http10: bool) -> None:
    """Content-Length and Transfer-Encoding rules h11 is lenient about (RFC 9112 6.3), and
    h11's bound on a Content-Length's digits (llhttp bounds only the value, so leading zeros
    pass it), on the head as ``check_head`` normalized it (lower case, HTAB as SP, decoded as Latin-1), which
    has a field of either or both."""
    if has_length:  # (partition, not find: it takes one argument, parsed for less)
        after = lower_head.partition("\r\ncontent-length:")[2]  # from the first one's value
        if "\r\ncontent-length:" in after:
            raise ProtocolError(400, "duplicate Content-Length")
        value = after.partition("\r\n")[0].strip(" ")
        if not (value.isascii() and value.isdigit()):  # (str.isdigit takes other scripts' digits)
            raise ProtocolError(400, "invalid Content-Length")
        if len(value) > MAX_CONTENT_LENGTH_DIGITS:
            raise ProtocolError(400, "Content-Length has too many digits")
    if has_coding:
        if has_length:
            raise ProtocolError(400, "both Content-Length and Transfer-Encoding")
        if is_http10:
            raise ProtocolError(400, "Transfer-Encoding on HTTP/1.0")
