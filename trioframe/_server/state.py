"""``ServingState``: what every connection of one server shares (the frozen app, the config,
the TLS context, the shutdown flag and signal, the open connections and those still opening,
which the connection limit chooses from)."""

from __future__ import annotations

import logging
from itertools import chain
from typing import TYPE_CHECKING

import attrs
import trio

from .._protocol.head import HeadLimits
from .._protocol.http1_parsers import adapter_class
from .._shutdown import Shutdown
from .background import BackgroundWork
from .slots import Eviction, SlotHolder, evict_one

if TYPE_CHECKING:
    import ssl

    from .._app import App
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
    #: where the requests' ``BackgroundTasks`` run (the lifecycle gives it its nursery)
    background: BackgroundWork = attrs.field(
        default=attrs.Factory(lambda self: BackgroundWork(self.log), takes_self=True)
    )
    shutting_down: bool = False
    #: set when graceful shutdown begins; ``shutdown`` is how handlers see it
    shutdown_event: trio.Event = attrs.field(factory=trio.Event)
    shutdown: Shutdown = attrs.field(
        default=attrs.Factory(lambda self: Shutdown(self.shutdown_event), takes_self=True)
    )
    #: the cancel scopes of event streams waiting for their next event (see ``exchange``)
    event_stream_waits: set[trio.CancelScope] = attrs.field(factory=set)
    connections: set[ServedConnection] = attrs.field(factory=set)
    #: accepted connections whose protocol does not run yet (``streams.Opening``); graceful
    #: shutdown leaves them to become connections (or fail) and closes them with the rest
    opening: set[SlotHolder] = attrs.field(factory=set)
    _all_closed: trio.Event | None = None
    _evictable: trio.Event | None = None  # set when a connection becomes evictable

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

    def slot_evictable(self) -> None:
        """A connection has become evictable (it began waiting for its client, or lingers
        before closing): wakes ``wait_for_evictable``."""
        if self._evictable is not None:
            self._evictable.set()
            self._evictable = None

    async def wait_for_evictable(self) -> None:
        """Return once some connection becomes evictable. Cancellation: a plain wait;
        nothing is left behind."""
        if self._evictable is None:
            self._evictable = trio.Event()
        await self._evictable.wait()

    def make_room(self, reason: str) -> Eviction:
        """At ``max_connections`` with a client waiting: close one connection for it, by the
        policy of ``slots.py``; ``reason`` is what a partial request is answered with."""
        observer = self.app.observer
        evicted = None if observer is None else lambda e: observer.connection_evicted(e.state)
        return evict_one(chain(self.opening, self.connections), reason, evicted)

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

        limits = config.limits
        head_limits = HeadLimits(
            max_head_size=limits.max_header_size,
            max_request_line_size=limits.max_request_line_size,
            max_header_count=limits.max_header_count,
        )
        return cls(
            app=app,
            config=config,
            head_limits=head_limits,
            http1_adapter=adapter_class(config.protocols.http1_parser),
            tls_context=tls_context,
            proxies=ProxyPolicy.of(config),
        )
