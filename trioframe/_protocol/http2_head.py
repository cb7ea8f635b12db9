"""An HTTP/2 request head (RFC 9113 section 8.3) as a ``RequestHead``, validated.

h2 decodes the header block; the checks of what it may contain are made here rather than by
h2, because h2 treats a malformed head as an error of the whole connection while RFC 9113
section 8.1.1 makes it an error of its stream only: one bad request never costs the client its
other streams. A ``MalformedHead`` carries the status the stream is answered with.

What the app sees is what an HTTP/1.1 request would give it: ``:method`` and ``:path`` become
the method and target (``:path`` held to the same rules as an HTTP/1.1 target), ``:authority``
becomes the ``Host`` header, cookie fields are joined into one (section 8.2.3); an extended
CONNECT (RFC 8441) has no body. Nothing here imports trio.
"""

from __future__ import annotations

import re

from .._http.grammar import LOWER_TOKEN_BYTES, TOKEN_BYTES
from .._http.headers import Header
from .errors import ProtocolError
from .head import check_host, check_target
from .request_head import RequestHead

__all__ = ["MalformedHead", "read_request_head"]

#: Field values: no NUL, CR or LF anywhere, no leading or trailing space or tab (8.2.1).
_BAD_VALUE = re.compile(rb"[\x00\r\n]|\A[ \t]|[ \t]\Z")
#: Fields that only make sense on one HTTP/1.1 connection (section 8.2.2).
_CONNECTION_SPECIFIC = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"}
)
_REQUEST_PSEUDO = frozenset({b":method", b":scheme", b":authority", b":path", b":protocol"})
#: Regular fields found valid (``_check_field``), bounded: the set starts afresh when full.
_VALID_FIELDS: set[tuple[bytes, bytes]] = set()
_MAX_VALID_FIELDS = 1024
_REMEMBERED_VALUE_SIZE = 256


class MalformedHead(ProtocolError):
    """The head breaks RFC 9113 section 8: its stream is answered with ``status`` (400 for a
    malformed head, 431 for one too large, 501 for a plain CONNECT); the connection goes on."""


def read_request_head(
    headers: list[Header],
    *,
    max_header_count: int,
    max_header_list_size: int,
    connect_protocol: bool,
) -> RequestHead:
    """Validate a decoded request head; return it as a ``RequestHead`` (version ``"2"``; its
    ``protocol`` is the ``:protocol`` of an RFC 8441 extended CONNECT).

    ``max_header_list_size`` is measured as SETTINGS_MAX_HEADER_LIST_SIZE is (name + value +
    32 per field); ``connect_protocol`` says whether the server announced extended CONNECT.
    Raises ``MalformedHead``."""
    pseudo: dict[bytes, bytes] = {}
    fields: list[Header] = []
    cookies: list[bytes] = []
    size = 0
    for name, value in headers:
        size += len(name) + len(value) + 32
        if name.startswith(b":"):
            if fields or cookies:
                raise MalformedHead(400, "pseudo-header field after a regular field")
            if name not in _REQUEST_PSEUDO:
                raise MalformedHead(400, "unknown or response pseudo-header field")
            if name in pseudo:
                raise MalformedHead(400, "repeated pseudo-header field")
            pseudo[name] = value
            continue
        if (name, value) not in _VALID_FIELDS:
            _check_field(name, value)
        if name == b"cookie":
            cookies.append(value)
        else:
            fields.append((name, value))
    if size > max_header_list_size:
        raise MalformedHead(431, "request header list too large")
    if cookies:
        fields.append((b"cookie", b"; ".join(cookies)))
    method, protocol = pseudo.get(b":method"), pseudo.get(b":protocol")
    if method is None:
        raise MalformedHead(400, "request without :method")
    if TOKEN_BYTES.fullmatch(method) is None:  # a token of either case (RFC 9110 section 9.1)
        raise MalformedHead(400, "invalid :method")
    if protocol is not None and (method != b"CONNECT" or not connect_protocol):
        raise MalformedHead(400, ":protocol outside an extended CONNECT")
    if method == b"CONNECT" and protocol is None:
        raise MalformedHead(501, "CONNECT is not supported")
    path, scheme = pseudo.get(b":path"), pseudo.get(b":scheme")
    if not path or not scheme:
        raise MalformedHead(400, "request without :scheme or :path")
    if not path.startswith(b"/") and not (path == b"*" and method == b"OPTIONS"):
        raise MalformedHead(400, ":path must be an absolute path")
    try:
        check_target(path)  # the rules of an HTTP/1.1 request target: no fragment, no %00
    except ProtocolError as exc:
        raise MalformedHead(400, exc.message) from None
    fields = _with_host(fields, pseudo.get(b":authority"))
    if len(fields) > max_header_count:  # counted as HTTP/1.1 would: Host and one Cookie
        raise MalformedHead(431, "too many header fields")
    return RequestHead(
        method=method,
        target=path,
        version="2",
        headers=fields,
        content_length=_content_length(fields),
        protocol=None if protocol is None else protocol.decode("latin-1"),
        # An extended CONNECT's DATA frames carry the tunnel (RFC 8441 section 5), never a
        # request body: whoever asks for the body gets b"" and the tunnel's bytes stay put.
        bodyless=protocol is not None,
    )


def _check_field(name: bytes, value: bytes) -> None:
    """A regular field's name and value must be valid on their own (RFC 9113 section 8.2);
    a field that is is remembered (a client repeats most of its fields on every request)."""
    # Lower-case tokens only: section 8.2.1 forbids upper case and 0x00-0x20, 0x7f+.
    if LOWER_TOKEN_BYTES.fullmatch(name) is None:
        raise MalformedHead(400, "invalid header field name")
    if _BAD_VALUE.search(value) is not None:
        raise MalformedHead(400, "invalid header field value")
    if name in _CONNECTION_SPECIFIC or (name == b"te" and value != b"trailers"):
        raise MalformedHead(400, "connection-specific header field")
    if len(value) <= _REMEMBERED_VALUE_SIZE:
        if len(_VALID_FIELDS) >= _MAX_VALID_FIELDS:
            _VALID_FIELDS.clear()
        _VALID_FIELDS.add((name, value))


def _with_host(fields: list[Header], authority: bytes | None) -> list[Header]:
    """``fields`` with ``Host`` from ``:authority`` (8.3.1); a ``Host`` that names another
    authority is malformed. Without ``:authority`` a ``Host`` field stands as sent."""
    hosts = [value for name, value in fields if name == b"host"]
    if len(hosts) > 1:
        raise MalformedHead(400, "repeated Host header field")
    value = authority if authority is not None else (hosts[0] if hosts else None)
    if value is None:
        return fields
    if authority is not None and hosts and hosts[0] != authority:
        raise MalformedHead(400, "Host and :authority differ")
    try:
        check_host(value)
    except ProtocolError as exc:
        raise MalformedHead(400, exc.message) from None
    if hosts:
        return fields
    return [(b"host", value), *fields]


def _content_length(fields: list[Header]) -> int | None:
    values = [value for name, value in fields if name == b"content-length"]
    if not values:
        return None
    if len(set(values)) != 1 or not values[0].isdigit():
        raise MalformedHead(400, "invalid Content-Length")
    return int(values[0])
