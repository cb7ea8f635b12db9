"""``Timeouts``: how long the server waits for a client, and when it stops a handler.

Durations are seconds (float). A client too slow with its request gets 408; one that does
not read its response is dropped.
"""

from __future__ import annotations

import attrs

from .checks import positive

__all__ = ["Timeouts"]


@attrs.frozen(kw_only=True)
class Timeouts:
    """Waits on the client and the ends of handlers. Durations are seconds."""

    #: From a connection's first byte (or the previous response) to the end of the request
    #: head (default 10 s) → 408 and close; a connection that sent nothing is closed
    #: silently. Also bounds a PROXY protocol header and the cleartext HTTP/2 preface.
    header_timeout: float = attrs.field(default=10.0, validator=positive)
    #: Longest wait between two reads of a request body (default 30 s) → 408.
    body_timeout: float = attrs.field(default=30.0, validator=positive)
    #: Slowest average a request body may arrive at, in bytes per second (default 1024):
    #: the time spent waiting for a body may reach ``body_timeout`` plus one second per
    #: ``min_body_rate`` bytes received → 408.
    min_body_rate: float = attrs.field(default=1024.0, validator=positive)
    #: Idle time allowed between requests on a keep-alive connection (default 5 s); then
    #: the connection is closed.
    keep_alive_timeout: float = attrs.field(default=5.0, validator=positive)
    #: Longest wait for the client to accept response bytes (default 60 s); then the
    #: connection is dropped.
    send_timeout: float = attrs.field(default=60.0, validator=positive)
    #: Grace period for in-flight requests on a graceful shutdown (default 10 s); then they
    #: are cancelled (503 when their response has not started, else the connection closes).
    shutdown_timeout: float = attrs.field(default=10.0, validator=positive)
    #: A client that goes away cancels its handler (default True).
    cancel_on_disconnect: bool = True
