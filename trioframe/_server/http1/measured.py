"""``MeasuredHTTP1Exchange``: an HTTP/1.1 exchange of an app with metrics (``measure.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._protocol.finalize import body_allowed
from ..measure import Measure, Measured
from .exchange import ConnectionView, HTTP1Exchange

if TYPE_CHECKING:
    import trio

    from ..._http.headers import Header
    from ..._protocol.request_head import RequestHead
    from ..exchange import Outcome

__all__ = ["MeasuredHTTP1Exchange"]


class MeasuredHTTP1Exchange(Measured, HTTP1Exchange):
    """An ``HTTP1Exchange`` whose answer the app's metrics record."""

    _base = HTTP1Exchange

    def __init__(
        self, connection: ConnectionView, head: RequestHead, scope: trio.CancelScope
    ) -> None:
        HTTP1Exchange.__init__(self, connection, head, scope)
        self.measure = Measure(connection.state, head)

    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        # (HTTP1Exchange's own finalises the response without ``send_response``)
        measure = self.measure
        measure.status = status
        outcome = await HTTP1Exchange.send_whole(self, status, headers, body)
        if measure.sent is not None and body_allowed(self.head.method, status):
            measure.sent += len(body)
        measure.record()
        return outcome
