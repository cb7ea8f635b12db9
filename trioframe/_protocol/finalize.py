"""Response finalisation: what every response carries on the wire beyond what the application
set, the same for every protocol. Pure functions over header lists; no I/O.

RFC 9110 rules applied here: a response to HEAD, a 1xx, 204 or 304 has no body (section 6.4.1);
a body of known size is announced with Content-Length unless the application already did
(section 8.6); every response carries Date (section 6.6.1).
"""

from __future__ import annotations

from .._http.headers import Header

__all__ = ["body_allowed", "final_headers"]

_NO_BODY_STATUSES = frozenset({204, 304})


def body_allowed(method: bytes, status: int) -> bool:
    """Whether a response with ``status`` to a ``method`` request sends body bytes."""
    return status >= 200 and status not in _NO_BODY_STATUSES and method != b"HEAD"


def final_headers(
    headers: list[Header], status: int, body_size: int | None, date: bytes
) -> list[Header]:
    """``headers`` plus ``Date``, plus ``Content-Length: body_size`` when the size is known
    (``None``: a streamed body), the status may carry a body and the application set no
    Content-Length itself. A HEAD response gets the length of the body it would have had."""
    final = [*headers, (b"date", date)]
    if body_size is not None and status >= 200 and status not in _NO_BODY_STATUSES:
        for name, _ in headers:
            if name == b"content-length":
                return final
        final.append((b"content-length", b"%d" % body_size))
    return final
