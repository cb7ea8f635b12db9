"""The standard error answer of an HTTP/1.1 connection, written straight to its stream.

It goes out outside the adapter's state machine (which may never have seen a request, or be
in its error state), always with ``Connection: close``: the connection ends after it. Both the
connection (a broken head, a timeout between requests) and an exchange (an error instead of
the app's response) answer with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ..._errors import error_body
from ..._protocol.http1 import render_simple_response
from ..clock import http_date

if TYPE_CHECKING:
    from ..config import Timeouts

__all__ = ["send_error_answer"]

_JSON = (b"content-type", b"application/json")


async def send_error_answer(
    stream: trio.abc.Stream,
    timeouts: Timeouts,
    status: int,
    message: str,
    *,
    send_body: bool = True,
) -> bool:
    """Write the standard error body for ``status`` (only its length for a ``HEAD``:
    ``send_body=False``) with ``Connection: close``, within ``send_timeout``; False when the
    peer is gone. Cancellation: a checkpoint; part of the answer may have been written."""
    data = render_simple_response(
        status,
        [_JSON, (b"date", http_date())],
        error_body(status, message),
        send_body=send_body,
    )
    with trio.move_on_after(timeouts.send_timeout):
        try:
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return False
    return True
