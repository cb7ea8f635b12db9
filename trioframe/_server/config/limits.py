"""``Limits``: how large a request head may be and how many connections and requests the
server takes, on every protocol. Past a limit the client gets the status named below."""

from __future__ import annotations

import attrs

from .checks import KiB, positive

__all__ = ["Limits"]


@attrs.frozen(kw_only=True)
class Limits:
    """Request head sizes and connection counts. Sizes are bytes."""

    #: Largest request head: request line, headers and the blank line (default 16 KiB)
    #: → 431. Also the largest trailer section of a chunked body.
    max_header_size: int = attrs.field(default=16 * KiB, validator=positive)
    #: Largest request line (default 8 KiB) → 414. Also the longest chunk-size line of a
    #: chunked body (→ 400).
    max_request_line_size: int = attrs.field(default=8 * KiB, validator=positive)
    #: Most header fields in one request (default 100) → 431, on HTTP/1.1 and HTTP/2. Also
    #: the most trailer fields.
    max_header_count: int = attrs.field(default=100, validator=positive)
    #: Accepting pauses while this many connections are open (default 1000): no 503; once a
    #: client waits in the listen queue, one connection that is only waiting for its client
    #: is closed to make room.
    max_connections: int = attrs.field(default=1000, validator=positive)
    #: After this many requests a connection is closed (default 1000): the last response
    #: carries ``Connection: close`` (HTTP/2: GOAWAY after that many streams).
    max_requests_per_connection: int = attrs.field(default=1000, validator=positive)
    #: Largest unread request body that is read and discarded, instead of closing the
    #: connection, to keep it alive after the response (default 64 KiB).
    max_drain_size: int = attrs.field(default=64 * KiB, validator=positive)
