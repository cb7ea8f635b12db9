"""A strict reference parser of an HTTP/1.1 request stream (RFC 9112), independent of the
server's code, for the fuzz oracle.

``parse_stream(data, limits)`` reads requests from the start of ``data`` until it meets
something it does not accept or runs out of bytes, and returns the complete requests it
accepted and why it stopped. Where the RFC lets a recipient choose between rejecting and
repairing (obs-fold, a bare LF line ending, ``Content-Length`` lists, ``Transfer-Encoding``
with ``Content-Length``, control characters in a field value) the reference rejects: that is
the project's policy, so every leniency of the server shows up as a request the reference
did not accept.

Each accepted request says whether the server *must* serve it (``must_accept``) or *may*
refuse it with an error instead. The reference marks as optional, rather than rejecting,
what does not touch message framing: a request-target with characters RFC 3986 does not
allow (``|``, ``{``, a bad percent escape) or that decode to a NUL (``%00``: this server refuses
one anywhere in the target), an HTTP/1.x minor version above 1, an ``Expect``
other than ``100-continue``, a ``Content-Length`` of more than 18 digits, and a chunk size of
more than 16 hex digits or bad whitespace (BWS) around a chunk extension (RFC 9112 allows
BWS; h11 refuses it). Only ``origin-form`` and ``absolute-form`` (``http``/``https``) targets
are accepted: this server serves no ``CONNECT`` and no ``OPTIONS *``.

The server's size limits are part of the reference (``Limits``): a head or body over them is
rejected.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["Limits", "Parse", "ReferenceRequest", "Stop", "parse_stream"]

_FIELD_CHAR = rb"[\x21-\x7e\x80-\xff]"
# A field value once the OWS around it is removed: visible characters, obs-text, and SP or
# HTAB only between them.
_FIELD_VALUE = re.compile(rb"(?:%s+(?:[ \t]+%s+)*)?" % (_FIELD_CHAR, _FIELD_CHAR))
_OWS = b" \t"
_PCHAR = rb"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_QUERY = rb"(?:\?(?:%s|[/?])*)?" % _PCHAR
_ORIGIN_FORM = re.compile(rb"(?:/%s*)+%s" % (_PCHAR, _QUERY))
_REG_NAME = rb"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})"
_IP_LITERAL = rb"\[[0-9A-Fa-f:.]+\]"
_HOST = re.compile(rb"(?:%s|%s*)(?::[0-9]*)?" % (_IP_LITERAL, _REG_NAME))
_ABSOLUTE_FORM = re.compile(
    rb"https?://(?:%s|%s+)(?::[0-9]*)?(?:/%s*)*%s" % (_IP_LITERAL, _REG_NAME, _PCHAR, _QUERY)
)
# Targets a server may refuse or serve: any visible ASCII after a leading "/" or a scheme.
_LOOSE_ORIGIN_FORM = re.compile(rb"/[\x21-\x7e]*")
_LOOSE_ABSOLUTE_FORM = re.compile(rb"(?i:https?)://[^/?\x00-\x20\x7f-\xff]+[\x21-\x7e]*")
_AUTHORITY = re.compile(rb"[^:]*://([^/?#]*)")  # of an absolute-form target
_VERSION = re.compile(rb"HTTP/1\.[0-9]")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_QUOTED_STRING = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
_TOKEN_CHARS = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN = re.compile(_TOKEN_CHARS)
_CHUNK_EXTENSION = re.compile(
    rb"(?P<bws1>[ \t]*);(?P<bws2>[ \t]*)%s(?:(?P<bws3>[ \t]*)=(?P<bws4>[ \t]*)(?:%s|%s))?"
    % (_TOKEN_CHARS, _TOKEN_CHARS, _QUOTED_STRING)
)


@attrs.frozen
class Limits:
    """The server's size limits, as the reference applies them."""

    max_head_size: int
    max_request_line_size: int
    max_header_count: int
    max_body_size: int


@attrs.frozen
class ReferenceRequest:
    """A request the reference accepted (``body`` is empty for a head whose body was not)."""

    method: str
    target: str  # as the app sees it: path and query (an absolute-form target reduced)
    host: str  # an absolute-form target's authority, else the Host field, else ""
    body: bytes
    expects_continue: bool
    must_accept: bool  # False: the server may refuse it with an error instead
    start: int  # offset of its request line in the stream
    end: int  # offset just past it


@attrs.frozen
class Stop:
    """Where and why the reference stopped.

    ``kind``: ``"end"`` (the data ended between requests), ``"incomplete"`` (it ended inside
    a request) or ``"rejected"`` (``reason`` says what). ``head`` is the stopping request's
    accepted head when only its body was incomplete or rejected."""

    kind: str
    reason: str
    offset: int  # the offending byte, or the end of the data
    start: int  # where the request the reference did not accept begins
    head: ReferenceRequest | None = None
    over_limit: bool = False  # it stopped at one of the server's size limits


@attrs.frozen
class Parse:
    """The outcome of :func:`parse_stream`."""

    requests: tuple[ReferenceRequest, ...]
    stop: Stop


class _Incomplete(Exception):
    pass


class _Rejected(Exception):
    def __init__(self, reason: str, offset: int, *, over_limit: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset
        self.over_limit = over_limit


def parse_stream(data: bytes, limits: Limits) -> Parse:
    """Parse ``data`` as a client's request stream: the requests accepted, then the stop."""
    parser = _Parser(data, limits)
    requests: list[ReferenceRequest] = []
    while True:
        start = parser.skip_empty_lines()
        head: ReferenceRequest | None = None
        try:
            if start == len(data):
                return Parse(tuple(requests), Stop("end", "end of data", start, start))
            head, framing = parser.head()
            body = parser.body(framing)
        except _Incomplete:
            return Parse(
                tuple(requests), Stop("incomplete", "more data needed", len(data), start, head)
            )
        except _Rejected as exc:
            reason = f"{parser.where}: {exc.reason}"
            stop = Stop("rejected", reason, exc.offset, start, head, exc.over_limit)
            return Parse(tuple(requests), stop)
        must_accept = head.must_accept and parser.body_must_accept
        requests.append(attrs.evolve(head, body=body, must_accept=must_accept, end=parser.pos))


class _Parser:
    def __init__(self, data: bytes, limits: Limits) -> None:
        self.data = data
        self.limits = limits
        self.pos = 0
        self.body_must_accept = True
        self.where = "request line"  # the part being parsed, for the stop's reason

    def skip_empty_lines(self) -> int:
        """RFC 9112 2.2: empty lines (CRLF) before a request line are ignored."""
        while self.data.startswith(b"\r\n", self.pos):
            self.pos += 2
        return self.pos

    def line(self) -> bytes:
        """The next line without its CRLF. A CR or LF that is not part of a CRLF rejects the
        stream as soon as it is seen; a line without its CRLF yet is incomplete."""
        data, start = self.data, self.pos
        end = data.find(b"\r\n", start)
        stray_lf = data.find(b"\n", start, len(data) if end == -1 else end)
        if stray_lf != -1:
            raise _Rejected("bare LF", stray_lf)
        stray_cr = data.find(b"\r", start, len(data) - 1 if end == -1 else end)
        if stray_cr != -1:
            raise _Rejected("bare CR", stray_cr)
        if end == -1:
            raise _Incomplete
        self.pos = end + 2
        return data[start:end]

    # -- head ---------------------------------------------------------------------------------
    def head(self) -> tuple[ReferenceRequest, int | None]:
        """The request head; its framing is a Content-Length, or ``None`` for chunked."""
        start, limits = self.pos, self.limits
        self.where = "request line"
        try:
            request_line = self.line()
        except _Incomplete:
            if len(self.data) - start > limits.max_request_line_size + 1:
                raise _Rejected("request line over the limit", start, over_limit=True) from None
            raise
        if len(request_line) > limits.max_request_line_size:
            raise _Rejected("request line over the limit", start, over_limit=True)
        method, target, authority, version, must_accept = self.request_line(request_line, start)
        self.where = "header section"
        fields: list[tuple[bytes, bytes]] = []
        while True:
            line_start = self.pos
            try:
                line = self.line()
            except _Incomplete:
                if len(self.data) - start > limits.max_head_size:
                    raise _Rejected("head over the limit", start, over_limit=True) from None
                raise
            if not line:
                break
            fields.append(self.field_line(line, line_start))
        if self.pos - start > limits.max_head_size:
            raise _Rejected("head over the limit", start, over_limit=True)
        if len(fields) > limits.max_header_count:
            raise _Rejected("too many header fields", start, over_limit=True)
        framing, expects_continue, fields_must_accept = self.check_fields(fields, version, start)
        hosts = [value for name, value in fields if name == b"host"]
        host = authority if authority is not None else (hosts[0] if hosts else b"")
        head = ReferenceRequest(
            method=method.decode("ascii"),
            target=target,
            host=host.decode("ascii"),
            body=b"",
            expects_continue=expects_continue,
            must_accept=must_accept and fields_must_accept,
            start=start,
            end=self.pos,
        )
        return head, framing

    def request_line(self, line: bytes, start: int) -> tuple[bytes, str, bytes | None, bytes, bool]:
        """Method, target as the app sees it, authority (of an absolute-form target, which
        RFC 9112 section 3.2.2 makes the request's host), version, ``must_accept``."""
        parts = line.split(b" ")
        if len(parts) != 3:
            raise _Rejected("request line is not three parts split by single spaces", start)
        method, target, version = parts
        if not _TOKEN.fullmatch(method):
            raise _Rejected("method is not a token", start)
        if method == b"CONNECT":
            raise _Rejected("CONNECT needs authority-form, which this server does not serve", start)
        if not _VERSION.fullmatch(version):
            raise _Rejected("not an HTTP/1.x version", start)
        must_accept = version in (b"HTTP/1.1", b"HTTP/1.0")
        if _ORIGIN_FORM.fullmatch(target) or _ABSOLUTE_FORM.fullmatch(target):
            must_accept = must_accept and b"%00" not in target
        elif _LOOSE_ORIGIN_FORM.fullmatch(target) or _LOOSE_ABSOLUTE_FORM.fullmatch(target):
            must_accept = False
        else:
            raise _Rejected("request-target is neither origin-form nor absolute-form", start)
        authority = None if target.startswith(b"/") else _AUTHORITY.match(target)
        return (
            method,
            _app_target(target.decode("ascii")),
            None if authority is None else authority[1],
            version[5:],
            must_accept,
        )

    def field_line(self, line: bytes, start: int) -> tuple[bytes, bytes]:
        """``field-name ":" OWS field-value OWS`` of the header or trailer section."""
        if line[:1] in (b" ", b"\t"):
            raise _Rejected("obs-fold (a line starting with whitespace)", start)
        name, colon, value = line.partition(b":")
        if not colon:
            raise _Rejected("field line without a colon", start)
        if not _TOKEN.fullmatch(name):
            raise _Rejected("field name is not a token (or whitespace before the colon)", start)
        value = value.strip(_OWS)
        if not _FIELD_VALUE.fullmatch(value):
            raise _Rejected("control character in a field value", start)
        return name.lower(), value

    def check_fields(
        self, fields: list[tuple[bytes, bytes]], version: bytes, start: int
    ) -> tuple[int | None, bool, bool]:
        """Host, Content-Length, Transfer-Encoding and Expect (RFC 9112 3.2, 6; RFC 9110
        10.1.1): the body's framing, whether 100-continue is expected, and ``must_accept``."""

        def values(name: bytes) -> list[bytes]:
            return [value for field, value in fields if field == name]

        def members(name: bytes) -> tuple[list[bytes], bool]:
            """A list field's lower-cased members, and whether it had empty ones (RFC 9110
            5.6.1: a recipient must accept them; a strict one may refuse)."""
            found = [m.strip(_OWS).lower() for v in values(name) for m in v.split(b",")]
            return [m for m in found if m], b"" in found

        hosts = values(b"host")
        if len(hosts) > 1 or not all(map(_HOST.fullmatch, hosts)):
            raise _Rejected("more than one Host, or an invalid one", start)
        if not hosts and version != b"1.0":
            raise _Rejected("an HTTP/1.1 (or later) request without Host", start)
        must_accept = True
        lengths = values(b"content-length")
        codings, empty_codings = members(b"transfer-encoding")
        framing: int | None = 0
        if values(b"transfer-encoding"):
            if version == b"1.0":
                raise _Rejected("Transfer-Encoding on HTTP/1.0", start)
            if lengths:
                raise _Rejected("both Content-Length and Transfer-Encoding", start)
            if codings != [b"chunked"]:
                raise _Rejected("Transfer-Encoding other than one 'chunked'", start)
            must_accept = not empty_codings
            framing = None
        elif lengths:
            if len(lengths) > 1 or not lengths[0].isdigit():
                raise _Rejected("more than one Content-Length, or an invalid one", start)
            must_accept = len(lengths[0]) <= 18
            significant = lengths[0].lstrip(b"0")  # (leading zeros may be many)
            framing = self.limits.max_body_size + 1  # past 18 digits: over any body limit
            if len(significant) <= 18:
                framing = int(significant or b"0")
        expects, empty_expects = members(b"expect")
        if empty_expects or any(value != b"100-continue" for value in expects):
            must_accept = False
        return framing, b"100-continue" in expects and version != b"1.0", must_accept

    # -- body ---------------------------------------------------------------------------------
    def body(self, framing: int | None) -> bytes:
        self.body_must_accept = True
        self.where = "body"
        if framing is None:
            return self.chunked_body()
        if framing > self.limits.max_body_size:
            raise _Rejected("body over the limit", self.pos, over_limit=True)
        if len(self.data) - self.pos < framing:
            raise _Incomplete
        self.pos += framing
        return self.data[self.pos - framing : self.pos]

    def chunked_body(self) -> bytes:
        """RFC 9112 7.1: chunks, the last chunk, the trailer section, the final CRLF."""
        data = self.data
        chunks: list[bytes] = []
        total = 0
        while True:
            line_start = self.pos
            self.where = "chunk size line"
            size = self.chunk_size_line(self.line(), line_start)
            if size == 0:
                break
            total += size
            if total > self.limits.max_body_size:
                raise _Rejected("body over the limit", line_start, over_limit=True)
            end = self.pos + size
            self.where = "chunk data"
            if len(data) < end + 2:
                if data[end : end + 1] not in (b"", b"\r"):
                    raise _Rejected("chunk data not followed by CRLF", end)
                raise _Incomplete
            if data[end : end + 2] != b"\r\n":
                raise _Rejected("chunk data not followed by CRLF", end)
            chunks.append(data[self.pos : end])
            self.pos = end + 2
        self.where = "trailer section"
        while True:
            line_start = self.pos
            line = self.line()
            if not line:
                return b"".join(chunks)
            self.field_line(line, line_start)

    def chunk_size_line(self, line: bytes, start: int) -> int:
        """``chunk-size *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )``."""
        size = _HEX.match(line)
        if size is None:
            raise _Rejected("chunk size is not hex digits", start)
        if len(size.group()) > 16:
            self.body_must_accept = False
        at = size.end()
        while at < len(line):
            extension = _CHUNK_EXTENSION.match(line, at)
            if extension is None:
                raise _Rejected(f"not a chunk extension: {line[at:]!r}", start)
            if any(extension.group("bws1", "bws2", "bws3", "bws4")):
                self.body_must_accept = False
            at = extension.end()
        return int(size.group(), 16)


def _app_target(target: str) -> str:
    """The target as the app sees it: an absolute-form target loses its scheme and
    authority, and an empty query its ``?``."""
    if not target.startswith("/"):
        rest = target.partition("://")[2]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i != -1), default=len(rest))
        target = rest[cut:]
        if not target.startswith("/"):
            target = "/" + target
    path, _, query = target.partition("?")
    return f"{path}?{query}" if query else path
