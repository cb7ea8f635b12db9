"""``LoggerMiddleware``: one access-log line per request."""

from __future__ import annotations

import datetime
import json
import logging
import re
from typing import TYPE_CHECKING, Literal

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
#: A W3C ``traceparent`` (version 00): its trace id is the second field; all zeros is invalid.
_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")


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

    ``format="json"`` writes the line as one JSON object instead, for log pipelines::

        {"time": "2026-11-28T18:20:00.123Z", "method": "GET", "path": "/users/42",
         "route": "/users/{user_id}", "status": 200, "duration_ms": 1.3,
         "client": "127.0.0.1:50000", "bytes": 27, "request_id": "5f0c...e1"}

    ``route`` is the pattern of the route that matched (``null`` when none did), ``bytes``
    ``null`` for a streamed body, ``status`` ``null`` when cancelled (``cancelled_by`` then
    says why, when it is known: ``request.cancelled_by``); ``peer`` appears when a
    trusted proxy named the client, ``request_id`` when there is one, and ``trace_id`` when
    the request carried a W3C ``traceparent``. The record has the attributes above as well,
    ``route`` and ``trace_id`` included.

    Cancellation: a request cancelled while the chain runs (client disconnect with
    ``cancel_on_disconnect``, server shutdown, an outer deadline) is still logged, with
    ``cancelled`` in place of the status (``status`` is ``None`` on the record) and ``-`` for
    bytes; then ``trio.Cancelled`` (or the exception group holding it, when the handler's
    nursery was cancelled) propagates unchanged. Exceptions never get here: the chain has
    turned them into responses. When the logger is not enabled for ``level``
    the middleware only calls ``next``.
    """

    __slots__ = ("_json", "_level", "_log")

    def __init__(
        self,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
        *,
        format: Literal["text", "json"] = "text",
    ) -> None:
        if format not in ("text", "json"):
            raise ValueError(f'format must be "text" or "json", not {format!r}')
        self._log = logger if logger is not None else logging.getLogger(ACCESS_LOGGER)
        self._level = level
        self._json = format == "json"

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
        if self._json:
            record = log.makeRecord(log.name, self._level, __file__, 0, "", (), None)
            record.msg = _json_line(
                record.created, request, who, peer, status, size, duration, request_id
            )
        else:
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
        fields["route"] = request.route
        fields["trace_id"] = trace_id_of(request)
        log.handle(record)


def _header_text(response: Response) -> str | None:
    value = response_header(response, b"x-request-id")
    return None if value is None else value.decode("latin-1")


def trace_id_of(request: Request) -> str | None:
    """The trace id of the W3C ``traceparent`` the request carried, if it has a valid one."""
    header = request.headers.get("traceparent")
    if header is None:
        return None
    found = _TRACEPARENT.fullmatch(header.strip())
    if found is None or found[1] == "0" * 32:
        return None
    return found[1]


def _json_line(
    created: float,
    request: Request,
    client: str,
    peer: str,
    status: int | None,
    size: int | str,
    duration: float,
    request_id: str | None,
) -> str:
    """One access line as a JSON object (see ``LoggerMiddleware``)."""
    stamp = datetime.datetime.fromtimestamp(created, datetime.UTC)
    line: dict[str, object] = {
        "time": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
        "method": str(request.method),
        "path": request.uri.raw_path,
        "route": request.route,
        "status": status,
        "duration_ms": round(duration, 3),
        "client": client,
        "bytes": size if isinstance(size, int) else None,
    }
    if peer != client:
        line["peer"] = peer
    if request_id is not None:
        line["request_id"] = request_id
    trace_id = trace_id_of(request)
    if trace_id is not None:
        line["trace_id"] = trace_id
    if status is None and (cause := request.cancelled_by) is not None:
        line["cancelled_by"] = cause
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))
