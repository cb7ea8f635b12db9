"""``BodyPace``: how long each wait for request body bytes may last.

Two limits bound a request body that arrives slowly, both as the deadline of each wait for its
bytes (a wait ends at the earlier one, and its exchange is answered 408):

- ``body_timeout``: no single wait lasts longer;
- ``min_body_rate``: over the whole body, the time spent waiting for it may reach
  ``body_timeout`` plus one second for every ``min_body_rate`` bytes received. A client that
  sends a byte now and then, each just within ``body_timeout``, falls behind and is cut off;
  one that keeps up the rate (after a first ``body_timeout`` of grace) never is.

Only the time the server waits for the client counts: a handler that works between two reads
costs the client nothing. HTTP/1.1 (``http1/``, also for draining a body the handler left)
and HTTP/2 (``http2/exchange.py``) pace their bodies with it alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from .config import Timeouts

__all__ = ["BodyPace"]


class BodyPace:
    """The pace of one request body: call ``start_wait`` before each wait for its bytes (its
    deadline) and ``end_wait`` after a wait that was not cut off."""

    __slots__ = ("_rate", "_started", "_timeout", "_waited", "too_slow")

    def __init__(self, timeouts: Timeouts) -> None:
        self._timeout = timeouts.body_timeout
        self._rate = timeouts.min_body_rate
        self._waited = 0.0  # seconds spent waiting for this body so far
        self._started = 0.0
        #: the current wait ends at the rate's deadline, before ``body_timeout``'s
        self.too_slow = False

    def start_wait(self, received: int) -> float:
        """A wait for body bytes begins, ``received`` bytes of the body in: its deadline."""
        now = self._started = trio.current_time()
        left = self._timeout + received / self._rate - self._waited
        self.too_slow = left < self._timeout
        return now + (left if self.too_slow else self._timeout)

    def end_wait(self) -> None:
        """The wait that ``start_wait`` began is over (bytes came, or the handler stopped)."""
        self._waited += trio.current_time() - self._started

    @property
    def timeout_message(self) -> str:
        """What a 408 says when the current wait's deadline has passed."""
        return "request body too slow" if self.too_slow else "request body timed out"
