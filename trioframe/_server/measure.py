"""The figures of each exchange, for an app with metrics (``App.observer``, see
``_metrics``): what the server answered, how long it took, how large the bodies were.

Only an app with an observer pays for any of this. Its connections serve their exchanges as
``Measured`` ones (``http1/measured.py``, ``http2/measured.py``): the same exchanges, whose
writing methods also note the status and the bytes that went out, so every answer counts
exactly as it was sent, whoever made it: the app's (404s included), a 500 for a bug, a 408
for a body too slow, a 503 at shutdown, the error answer to a malformed HTTP/2 request. They
run through ``serve_measured`` instead of ``serve_exchange``, which counts the request as in
progress while it runs and closes the books after it; ``serve_exchange`` hands the built
request over (``Exchange.routed``) for its route. An answer is recorded once, when its last
byte has been written (a WebSocket handshake: when the protocol switches); an exchange that
ends with no answer at all (the client gone, the exchange cut short) is recorded without a
status, and one whose connection is torn down under it is not recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

import trio

from .._protocol.finalize import body_allowed
from .exchange import Exchange, Outcome, serve_exchange

if TYPE_CHECKING:
    from .._http.headers import Header
    from .._metrics.observer import Observer
    from .._protocol.request_head import RequestHead
    from .._request import Request
    from .state import ServingState

__all__ = ["Measure", "Measured", "serve_measured"]


class Measure:
    """What the observer will be told of one exchange, gathered as it goes."""

    __slots__ = (
        "declared",
        "method",
        "observer",
        "recorded",
        "request",
        "route",
        "sent",
        "serving",
        "started",
        "state",
        "status",
        "websocket",
    )

    def __init__(self, state: ServingState, head: RequestHead) -> None:
        observer = state.app.observer
        assert observer is not None  # (only an app with metrics makes measured exchanges)
        self.observer: Observer = observer
        self.state = state
        self.method = head.method
        self.declared = head.content_length
        self.started = trio.current_time()
        #: the request, until the answer is recorded (it refers back to the exchange, which
        #: refers to this: dropped then, the exchange is freed without the cycle collector)
        self.request: Request | None = None
        #: the pattern of the route that matched (``None``: none did, or not yet known)
        self.route: str | None = None
        #: the status that went out (``None``: none yet)
        self.status: int | None = None
        #: response body bytes written; ``None`` for an error answer the server wrote itself
        self.sent: int | None = 0
        self.recorded = False
        self.serving = False  # counted among the requests in progress
        self.websocket = False  # counted among the open WebSocket sessions

    def begin(self) -> None:
        """The request is in progress."""
        self.serving = True
        self.observer.request_started(self.method)

    def leave(self) -> None:
        """The request is no longer in progress (nor its WebSocket session, if it had one)."""
        if self.serving:
            self.serving = False
            self.observer.request_ended(self.method)
        if self.websocket:
            self.websocket = False
            self.observer.websocket_closed(self.route)

    def record(self) -> None:
        """Tell the observer how the request was answered (once; later calls do nothing)."""
        if self.recorded:
            return
        self.recorded = True
        request = self.request
        size = self.declared
        if size is None and request is not None and request.body_reader.received:
            size = request.body_reader.received  # a body without a declared length
        self.request = None
        sent = self.sent if self.status is not None else None
        seconds = trio.current_time() - self.started
        self.observer.request_answered(self.method, self.route, self.status, seconds, size, sent)

    def switched(self) -> None:
        """The WebSocket handshake was answered: the request is over, the session begins."""
        self.status, self.sent = 101, 0
        self.record()
        if self.serving:
            self.serving = False
            self.observer.request_ended(self.method)
        self.websocket = True
        self.observer.websocket_opened(self.route)


class Measured(Exchange):
    """An exchange whose writes also note what went out, in ``measure``. A mixin: the class
    that uses it puts it first and names the protocol's exchange class as ``_base``, whose
    methods it calls (``Exchange``'s own are abstract) and whose constructor it runs before
    making ``measure``."""

    _base: ClassVar[type[Exchange]]
    measure: Measure

    def routed(self, request: Request) -> None:
        measure = self.measure
        measure.request, measure.route = request, request.route

    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        measure = self.measure
        measure.status = status
        outcome = await self._base.send_whole(self, status, headers, body)
        if measure.sent is not None and body_allowed(self.head.method, status):
            measure.sent += len(body)
        measure.record()
        return outcome

    async def send_head(self, status: int, headers: list[Header]) -> None:
        self.measure.status = status
        await self._base.send_head(self, status, headers)

    async def send_data(self, data: bytes) -> None:
        await self._base.send_data(self, data)
        if self.measure.sent is not None:
            self.measure.sent += len(data)

    async def send_file(self, fd: int, offset: int, length: int) -> None:
        measure = self.measure
        before = measure.sent
        await self._base.send_file(self, fd, offset, length)
        if before is not None and measure.sent == before:  # (not counted by send_data)
            measure.sent = before + length

    async def send_end(self) -> Outcome:
        outcome = await self._base.send_end(self)
        self.measure.record()
        return outcome

    async def send_error(self, status: int, message: str) -> Outcome:
        measure = self.measure
        if not self.response_started:  # (else nothing can be sent: the exchange ends)
            measure.status, measure.sent = status, None
            if status == 503 and measure.state.shutting_down:
                measure.observer.refused_at_shutdown()
        outcome = await self._base.send_error(self, status, message)
        measure.record()
        return outcome

    async def upgrade(self, headers: list[Header]) -> trio.abc.Stream:
        stream = await self._base.upgrade(self, headers)
        self.measure.switched()
        return stream

    def abort(self) -> Outcome:
        outcome = self._base.abort(self)
        self.measure.record()
        return outcome


async def serve_measured(exchange: Exchange, state: ServingState) -> Outcome:
    """``serve_exchange`` for a ``Measured`` exchange: counted in progress while it runs,
    recorded when it returns. When it is cancelled, ``answer_cancelled`` answers (or ends)
    the exchange, which records it then."""
    measure = cast(Measured, exchange).measure
    measure.begin()
    try:
        outcome = await serve_exchange(exchange, state)
    finally:
        measure.leave()
    measure.record()
    return outcome
