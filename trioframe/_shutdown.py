"""``Shutdown``: the server's graceful-shutdown signal, as handlers see it.

A thin façade over an event the server owns (a ``trio.Event`` in practice), so this module
imports no trio and the extractor layer can name the class.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Shutdown"]


class ShutdownEvent(Protocol):
    """What the server provides behind a ``Shutdown`` (``trio.Event`` fits)."""

    def is_set(self) -> bool: ...
    async def wait(self) -> None: ...


class Shutdown:
    """The server's graceful-shutdown signal: take it as a handler parameter
    (``shutdown: Shutdown``) so a long-lived handler (a stream, a long poll, a WebSocket)
    can finish cleanly when the server begins to shut down::

        async def poll(shutdown: Shutdown) -> Response:
            with trio.move_on_after(30):
                await shutdown.wait()
            return Response.json({"events": []})

    It is set the moment a graceful shutdown begins (``server.shutdown()``, SIGINT/SIGTERM
    under ``run()``), before the in-flight requests are given ``shutdown_timeout`` to finish;
    under ``TestClient`` it is set when the client closes. It is never cleared.
    """

    __slots__ = ("_event",)

    def __init__(self, event: ShutdownEvent) -> None:
        self._event = event

    def __repr__(self) -> str:
        return f"<Shutdown {'set' if self.is_set() else 'not set'}>"

    def is_set(self) -> bool:
        """Whether graceful shutdown has begun."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once graceful shutdown has begun (at once if it has). Cancellation: a
        plain wait; nothing is left behind."""
        await self._event.wait()
