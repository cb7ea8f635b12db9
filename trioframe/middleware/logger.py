"""``LoggerMiddleware``: one access-log line per request."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from .._http.method import Method
from ._headers import response_header
from .request_id import RequestId

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._response import Response

__all__ = ["ACCESS_LOGGER", "LoggerMiddleware"]

#: The logger the access lines go to unless another one is given.
ACCESS_LOGGER = "trioframe.access"

_FORMAT = '%s "%s %s" %s %s %.1fms %s'


class LoggerMiddleware:
    """Log one line per request on the ``trioframe.access`` logger (``level``, INFO by
    default)::

        127.0.0.1:50000 "GET /users/42" 200 27 1.3ms 5f0c...e1

    Fields: client ``host:port`` (``-`` when unknown), method, raw path (the query string is
    left out: it often carries tokens), status, body bytes (``-`` for a streamed body, ``0``
    for ``HEAD``), the time the rest of the chain took to produce the response in
    milliseconds (``trio.current_time()``, so it follows a mock clock; sending the body is not
    included), and the request id (``-`` when there is none): the :class:`RequestId` in
    ``request.extensions`` if ``RequestIdMiddleware`` ran, else the response's
    ``x-request-id`` header. The same values are on the log record as attributes ``client``,
    ``method``, ``path``, ``status``, ``bytes``, ``duration_ms`` and ``request_id``.

    Behind a trusted proxy (``ServerConfig.trusted_proxies``) ``client`` is the client the
    proxy named, and the line adds `` via `` and the proxy's address (``request.peer``), also
    on the record as ``peer`` (the same as ``client`` when no proxy named one).

    Errors are logged like any response: the chain has already turned them into 4xx/5xx
    responses when they reach this middleware (put it outermost to see every one).

    Cancellation: a request cancelled while the chain runs (client disconnect with
    ``cancel_on_disconnect``, server shutdown, an outer deadline) is still logged, with
    ``cancelled`` in place of the status (``status`` is ``None`` on the record) and ``-`` for
    bytes; then ``trio.Cancelled`` (or the exception group holding it, when the handler's
    nursery was cancelled) propagates unchanged. Exceptions never get here: the chain has
    turned them into responses. When the logger is not enabled for ``level``
    the middleware only calls ``next``.
    """

    __slots__ = ("_level", "_log")

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        self._log = logger if logger is not None else logging.getLogger(ACCESS_LOGGER)
        self._level = level

    async def __call__(self, request: Request, next: Next) -> Response:
        if not self._log.isEnabledFor(self._level):
            return await next(request)
        start = trio.current_time()
        try:
            response = await next(request)
        except BaseException:  # Cancelled, possibly inside an exception group
            self._emit(request, None, start)
            raise
        self._emit(request, response, start)
        return response

    def _emit(self, request: Request, response: Response | None, start: float) -> None:
        duration = (trio.current_time() - start) * 1000.0
        client = request.client
        who = f"{client[0]}:{client[1]}" if client is not None else "-"
        where = peer = who
        proxy = request.peer
        if proxy != client and proxy is not None:  # a trusted proxy named the client
            peer = f"{proxy[0]}:{proxy[1]}"
            where = f"{who} via {peer}"
        request_id: str | None = request.extensions.get(RequestId)
        size: int | str = "-"
        status: int | None = None
        if response is not None:
            status = response.status
            if request_id is None:
                request_id = _header_text(response)
            if response.body_stream is None:
                size = 0 if request.method == Method.HEAD else len(response.body)
        method, path = str(request.method), request.uri.raw_path
        log = self._log
        # makeRecord + handle, not log(): skips the caller lookup (a stack walk), which for an
        # access line would only ever name this module. The fields go straight into the
        # record's __dict__ rather than through ``extra=``, which checks every name.
        shown = "cancelled" if status is None else status
        args = (where, method, path, shown, size, duration, request_id or "-")
        record = log.makeRecord(log.name, self._level, __file__, 0, _FORMAT, args, None)
        fields = record.__dict__
        fields["client"] = who
        fields["peer"] = peer
        fields["method"] = method
        fields["path"] = path
        fields["status"] = status
        fields["bytes"] = size
        fields["duration_ms"] = duration
        fields["request_id"] = request_id
        log.handle(record)


def _header_text(response: Response) -> str | None:
    value = response_header(response, b"x-request-id")
    return None if value is None else value.decode("latin-1")
