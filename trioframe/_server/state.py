"""``ServingState``: what every connection of one server shares (the frozen app, the config,
the shutdown flag, the set of open connections)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import attrs
import trio

from .._protocol.head import HeadLimits

if TYPE_CHECKING:
    from .._dispatch import App
    from .config import ServerConfig
    from .connection import HTTP1Connection

__all__ = ["ServingState"]


@attrs.define(eq=False)
class ServingState:
    """Shared by a server's connections; mutated only by the server's own tasks."""

    app: App
    config: ServerConfig
    head_limits: HeadLimits
    log: logging.Logger = attrs.field(factory=lambda: logging.getLogger("trioframe"))
    shutting_down: bool = False
    connections: set[HTTP1Connection] = attrs.field(factory=set)
    _all_closed: trio.Event | None = None

    def forget(self, connection: HTTP1Connection) -> None:
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
    def create(cls, app: App, config: ServerConfig) -> ServingState:
        limits = HeadLimits(
            max_head_size=config.max_header_size,
            max_request_line_size=config.max_request_line_size,
            max_header_count=config.max_header_count,
        )
        return cls(app=app, config=config, head_limits=limits)
