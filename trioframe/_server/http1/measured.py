"""``MeasuredHTTP1Exchange``: an HTTP/1.1 exchange of an app with metrics (``measure.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..measure import Measure, Measured
from .exchange import ConnectionView, HTTP1Exchange

if TYPE_CHECKING:
    import trio

    from ..._protocol.request_head import RequestHead

__all__ = ["MeasuredHTTP1Exchange"]


class MeasuredHTTP1Exchange(Measured, HTTP1Exchange):
    """An ``HTTP1Exchange`` whose answer the app's metrics record."""

    _base = HTTP1Exchange

    def __init__(
        self, connection: ConnectionView, head: RequestHead, scope: trio.CancelScope
    ) -> None:
        HTTP1Exchange.__init__(self, connection, head, scope)
        self.measure = Measure(connection.state, head)
