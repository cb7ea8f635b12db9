"""The middleware chain: ``Middleware``, ``Next`` and ``compose``, which wraps a terminal
(the handler's call, or the answer of a request no route takes) in middleware layers
(``wrap`` for a terminal that answers its own failures).

Every layer turns what it raises into a response with the standard error body, so the layer
around it always sees a ``Response``; only ``trio.Cancelled`` (and other ``BaseException``s)
pass through. Nothing here does I/O.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._errors import Error
from ._response import Response

if TYPE_CHECKING:
    from ._request import Request

__all__ = ["Middleware", "Next", "answer_failure", "compose", "wrap"]

log = logging.getLogger("trioframe")


#: ``await next(request)`` runs the rest of the chain and gives its response.
Next = Callable[["Request"], Awaitable[Response]]
#: A middleware: ``async (request, next) -> Response``, a function or an object.
Middleware = Callable[["Request", Next], Awaitable[Any]]


def _error_response(error: Exception, request: Request) -> Response:
    if isinstance(error, Error):
        return _render_error(error, request)
    log.error("unhandled error answering %s %s", request.method, request.uri, exc_info=error)
    return Response.error(500, "Internal Server Error")


def _endpoint_layer(terminal: Next) -> Next:
    """The innermost layer: the handler's outcome as a response (``answer_failure``)."""

    async def endpoint(request: Request) -> Response:
        try:
            return await terminal(request)
        except Exception as error:
            return answer_failure(error, request)

    return endpoint


def answer_failure(error: Exception, request: Request) -> Response:
    """The response for a handler that raised ``error`` (a ``JSONDecodeError``, say from
    ``json.loads``, is the client's malformed JSON: 400). A handler that raised drops the
    ``BackgroundTasks`` it added; a cancelled one does not."""
    if request.background_tasks is not None:  # the handler's work is not done
        request.background_tasks.drop()
    if isinstance(error, json.JSONDecodeError):
        return Response.error(400, "malformed JSON")
    return _error_response(error, request)


def _middleware_layer(middleware: Middleware, next_: Next) -> Next:
    """One middleware around ``next_``; what it raises, or a non-``Response`` it returns
    (a forgotten ``return``), becomes the response the layer around it sees."""

    async def layer(request: Request) -> Response:
        try:
            response = await middleware(request, next_)
            if not isinstance(response, Response):
                raise TypeError(f"middleware {middleware!r} returned {response!r}, not a Response")
            return response
        except Exception as error:
            return _error_response(error, request)

    return layer


def compose(middlewares: Sequence[Middleware], terminal: Next) -> Next:
    """The chain: the first middleware runs outermost, ``terminal`` innermost. Each layer
    runs in the caller's task and cancel scope: no tasks, no threads. Cancellation passes
    through every layer."""
    return wrap(middlewares, _endpoint_layer(terminal))


def wrap(middlewares: Sequence[Middleware], endpoint: Next) -> Next:
    """As ``compose``, around an ``endpoint`` that answers its own failures as the innermost
    layer does (``answer_failure``): one coroutine fewer in every request's chain."""
    chain = endpoint
    for middleware in reversed(middlewares):
        chain = _middleware_layer(middleware, chain)
    return chain


def _render_error(error: Error, request: Request) -> Response:
    if error.status >= 500:
        log.error(
            "%s %s answered %d: %s",
            request.method,
            request.uri,
            error.status,
            error.message,
            exc_info=error.__cause__ is not None,
        )
    try:
        return Response.from_error(error)
    except ValueError:  # headers= held a value HTTP cannot carry
        log.exception("cannot render %r for %s %s", error, request.method, request.uri)
        return Response.error(500, "Internal Server Error")
