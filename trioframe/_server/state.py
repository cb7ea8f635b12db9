"""``ServingState``: what every connection of one server shares (the frozen app, the config,
the TLS context, the shutdown flag and signal, the set of open connections)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import attrs
import trio

from .._protocol.head import HeadLimits
from .._protocol.http1_parsers import adapter_class
from .._shutdown import Shutdown

if TYPE_CHECKING:
    import ssl

    from .._dispatch import App
    from .._protocol.http1_base import BaseHTTP1Adapter
    from .config import ServerConfig
    from .proxies import ProxyPolicy
    from .served import ServedConnection

__all__ = ["ServingState"]


@attrs.define(eq=False)
class ServingState:
    """Shared by a server's connections; mutated only by the server's own tasks."""

    app: App
    config: ServerConfig
    head_limits: HeadLimits
    #: the HTTP/1.1 adapter class (``ServerConfig.http1_parser``)
    http1_adapter: type[BaseHTTP1Adapter]
    #: the server's TLS context (``None``: plain HTTP)
    tls_context: ssl.SSLContext | None = None
    #: the trusted proxies (``None``: none, the forwarding headers are not looked at)
    proxies: ProxyPolicy | None = None
    log: logging.Logger = attrs.field(factory=lambda: logging.getLogger("trioframe"))
    shutting_down: bool = False
    #: set when graceful shutdown begins; ``shutdown`` is how handlers see it
    shutdown_event: trio.Event = attrs.field(factory=trio.Event)
    shutdown: Shutdown = attrs.field(
        default=attrs.Factory(lambda self: Shutdown(self.shutdown_event), takes_self=True)
    )
    #: the cancel scopes of event streams waiting for their next event (see ``exchange``)
    event_stream_waits: set[trio.CancelScope] = attrs.field(factory=set)
    connections: set[ServedConnection] = attrs.field(factory=set)
    _all_closed: trio.Event | None = None
    _idle_wanted: trio.Event | None = None  # set when a connection starts waiting idle

    def begin_shutdown(self) -> None:
        """Graceful shutdown begins: set the ``Shutdown`` signal and end the event streams
        (their waits for the next event are cancelled; ``exchange`` then ends them cleanly).
        The connections are told separately (``ServedConnection.begin_shutdown``)."""
        self.shutting_down = True
        self.shutdown_event.set()
        for scope in self.event_stream_waits:
            scope.cancel()

    def renew_shutdown(self) -> None:
        """Before serving (again): not shutting down, with a fresh ``Shutdown`` signal."""
        self.shutting_down = False
        if self.shutdown_event.is_set():
            self.shutdown_event = trio.Event()
            self.shutdown = Shutdown(self.shutdown_event)

    def connection_idle(self) -> None:
        """A connection has begun waiting for its next request (wakes ``wait_for_idle``)."""
        if self._idle_wanted is not None:
            self._idle_wanted.set()
            self._idle_wanted = None

    async def wait_for_idle(self) -> None:
        """Return once some connection begins waiting for a request. Cancellation: a plain
        wait; nothing is left behind."""
        if self._idle_wanted is None:
            self._idle_wanted = trio.Event()
        await self._idle_wanted.wait()

    def close_oldest_idle(self, reason: str) -> bool:
        """Close the connection that has waited longest for a request; False when none is
        waiting. Linear in the number of connections: called only at ``max_connections``."""
        idle = [c for c in self.connections if c.is_idle]
        if not idle:
            return False
        return min(idle, key=lambda c: c.idle_since).close_if_idle(reason)

    def forget(self, connection: ServedConnection) -> None:
        """A connection has ended."""
        self.connections.discard(connection)
        if not self.connections and self._all_closed is not None:
            self._all_closed.set()

    async def wait_all_closed(self) -> None:
        """Return once no connection is open. Cancellation: a plain checkpoint."""
        if not self.connections:
            await trio.lowlevel.checkpoint()
            return
        self._all_closed = trio.Event()
        await self._all_closed.wait()

    @classmethod
    def create(
        cls, app: App, config: ServerConfig, tls_context: ssl.SSLContext | None = None
    ) -> ServingState:
        from .proxies import ProxyPolicy  # (it imports the request layer)

        limits = HeadLimits(
            max_head_size=config.max_header_size,
            max_request_line_size=config.max_request_line_size,
            max_header_count=config.max_header_count,
        )
        return cls(
            app=app,
            config=config,
            head_limits=limits,
            http1_adapter=adapter_class(config.http1_parser),
            tls_context=tls_context,
            proxies=ProxyPolicy.of(config),
        )
