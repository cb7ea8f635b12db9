"""``TimeoutMiddleware``: a deadline around the rest of the chain."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

from .._errors import ConfigurationError
from .._response import Response

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request

__all__ = ["TimeoutMiddleware"]


class TimeoutMiddleware:
    """Answer 503 (standard error body) when the rest of the chain takes longer than
    ``seconds`` to produce a response.

    Cancellation: the deadline is a ``trio.move_on_after`` scope around ``await next(request)``,
    in the request's own task. When it expires, whatever the inner middleware and the handler
    are awaiting raises ``trio.Cancelled`` (their ``finally`` blocks and ``except trio.Cancelled``
    clean-up run) and this middleware answers 503 at that instant, with
    ``request.cancelled_by`` set to ``"deadline"``. Cancellation from outside (client
    disconnect, server shutdown) passes through unchanged. The deadline covers producing the
    response (reading the request body included) but not sending a streamed body: once
    ``next`` has returned, streaming is bounded by the server's ``send_timeout``.
    A handler that swallows ``Cancelled`` and returns anyway has its response sent.

    ``seconds`` must be a positive finite number (``ConfigurationError`` otherwise).
    """

    __slots__ = ("_message", "seconds")

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ConfigurationError(
                f"TimeoutMiddleware needs a number of seconds, not {seconds!r}"
            )
        if not (seconds > 0 and math.isfinite(seconds)):
            raise ConfigurationError(
                f"TimeoutMiddleware seconds must be positive and finite, not {seconds!r}"
            )
        self.seconds = float(seconds)
        self._message = f"the request took longer than {seconds:g} s"

    async def __call__(self, request: Request, next: Next) -> Response:
        with trio.move_on_after(self.seconds):
            return await next(request)
        request.cancelled_by = "deadline"
        return Response.error(503, self._message)
