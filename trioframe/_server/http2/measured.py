"""``MeasuredHTTP2Exchange``: an HTTP/2 stream's exchange of an app with metrics
(``measure.py``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from ..exchange import Exchange, Outcome, serve_exchange
from ..measure import Measure, Measured, serve_measured
from .exchange import ConnectionView, HTTP2Exchange

if TYPE_CHECKING:
    from ..._protocol.request_head import RequestHead
    from ..state import ServingState

__all__ = ["MeasuredHTTP2Exchange", "error_goaway", "stream_serving"]

#: What serves an exchange: ``serve_exchange``, or ``serve_measured``.
Serve = Callable[[Exchange, "ServingState"], Awaitable[Outcome]]


class ServedView(ConnectionView, Protocol):
    """The connection as its measured exchanges see it: with the server's state."""

    @property
    def state(self) -> ServingState: ...


class MeasuredHTTP2Exchange(Measured, HTTP2Exchange):
    """An ``HTTP2Exchange`` whose answer the app's metrics record."""

    _base = HTTP2Exchange

    def __init__(
        self,
        connection: ServedView,
        stream_id: int,
        head: RequestHead,
        body_ended: bool,
        *,
        refused: bool = False,
    ) -> None:
        HTTP2Exchange.__init__(self, connection, stream_id, head, body_ended, refused=refused)
        self.measure = Measure(connection.state, head)


def stream_serving(state: ServingState) -> tuple[type[HTTP2Exchange], Serve]:
    """The exchange class of a connection's streams, and what serves them: measured ones
    when the app has metrics."""
    if state.app.observer is None:
        return HTTP2Exchange, serve_exchange
    return MeasuredHTTP2Exchange, serve_measured


def error_goaway(state: ServingState, reason: str) -> None:
    """A connection of ``state`` was ended with an error GOAWAY for ``reason``: the app's
    metrics count it."""
    observer = state.app.observer
    if observer is not None:
        observer.http2_error_goaway(reason)
