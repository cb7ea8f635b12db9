"""``ServedConnection``: what the serve loop, the connection limit and graceful shutdown know
of a connection, whatever protocol it speaks (``http1.connection.HTTP1Connection`` and
``http2.connection.HTTP2Connection`` implement it)."""

from __future__ import annotations

from typing import Protocol

from .slots import SlotHolder

__all__ = ["ServedConnection"]


class ServedConnection(SlotHolder, Protocol):
    """One accepted connection, served by ``run()`` in its own task; the connection limit
    may close it while it waits for its client (``SlotHolder``, policy in ``slots.py``)."""

    #: the address the connection came from (``client`` may be another: see ``proxies``)
    peer: tuple[str, int] | None
    #: the protocol it speaks, as metrics name it: ``"http/1.1"`` or ``"h2"``
    protocol: str

    async def run(self) -> None:
        """Serve until the peer leaves, a limit ends the connection or shutdown closes it;
        the stream is closed when it returns. Cancelling it closes the connection at once."""

    def begin_shutdown(self) -> None:
        """Graceful shutdown begins: close now if idle, else after the requests in progress
        (no new ones: HTTP/1.1 says ``Connection: close``; WebSockets close with 1001)."""

    def cancel_for_shutdown(self) -> None:
        """The grace period is over: cancel what still runs (a request whose response has not
        started is answered 503)."""
