"""The application side of a request: route, call the handler, turn the outcome into a
``Response``.

``App`` is a frozen router: the trie and every handler's extractor plan are built once, in
the constructor. ``App.handle`` never raises except ``trio.Cancelled`` (and other
``BaseException``s): every ``Error`` and unexpected exception becomes a response with the
standard error body. It uses no sockets or streams.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import Error, PayloadTooLarge
from ._extract import HandlerPlan, build_plan
from ._response import Response, to_response
from ._routing.results import (
    AutoOptions,
    BadPath,
    Endpoint,
    Found,
    MethodNotAllowed,
    NotFound,
    Redirect,
)

if TYPE_CHECKING:
    from ._request import Request
    from ._routing.router import Router

__all__ = ["App", "PreparedEndpoint"]

log = logging.getLogger("trioframe")


@attrs.frozen
class PreparedEndpoint:
    """A route's endpoint with its handler plan, built once when the app is frozen."""

    endpoint: Endpoint
    plan: HandlerPlan


def _prepare(endpoint: Endpoint) -> PreparedEndpoint:
    states = tuple(value for router in endpoint.routers for value in router.states)
    multipart = next(
        (r.multipart_settings for r in reversed(endpoint.routers) if r.multipart_settings),
        None,
    )
    plan = build_plan(endpoint.handler, endpoint.param_names, states, multipart)
    return PreparedEndpoint(endpoint, plan)


class App:
    """A frozen router ready to answer requests. Raises ``ConfigurationError`` here, at
    freeze time, for anything wrong with the routes or handlers."""

    def __init__(self, router: Router, *, max_body_size: int = 10 * 1024 * 1024) -> None:
        self.router = router
        self.max_body_size = max_body_size
        self._table = router.freeze(_prepare)

    async def handle(self, request: Request) -> Response:
        """Answer ``request``. Cancellation propagates (the handler's state is whatever it
        left); every other failure becomes an error response."""
        match = self._table.match(request.method, request.uri.raw_path)
        try:
            if type(match) is Found:
                request.params = match.params
                return await self._call(match.target, request)
            return await self._answer_unrouted(match, request)
        except Error as error:
            return _render_error(error, request)
        except json.JSONDecodeError:
            return Response.error(400, "malformed JSON")
        except Exception:
            log.exception("unhandled error in handler for %s %s", request.method, request.uri)
            return Response.error(500, "Internal Server Error")

    async def _call(self, target: PreparedEndpoint, request: Request) -> Response:
        multipart = target.plan.multipart
        if multipart is not None:
            request.body_limit = (multipart.max_total_size, "max_total_size")
        limit, setting = request.body_limit or (self.max_body_size, "max_body_size")
        declared = request.headers.get("content-length")
        if declared is not None and int(declared) > limit:
            raise PayloadTooLarge(f"request body is larger than {setting} ({limit} bytes)")
        return to_response(await target.plan.call(request))

    async def _answer_unrouted(self, match: Any, request: Request) -> Response:
        if type(match) is NotFound:
            if match.fallback is not None:
                return await self._call(match.fallback, request)
            raise Error.not_found(f"{request.uri.raw_path}")
        if type(match) is Redirect:
            location = (
                f"{match.location}?{request.uri.query}" if request.uri.query else match.location
            )
            return Response(308).with_header("location", location)
        if type(match) is MethodNotAllowed:
            allow = ", ".join(match.allow)
            raise Error(405, f"method {request.method} is not allowed", headers={"allow": allow})
        if type(match) is AutoOptions:
            return Response(204).with_header("allow", ", ".join(match.allow))
        if type(match) is BadPath:
            raise Error.bad_request(match.message)
        raise AssertionError(f"unknown route match {match!r}")  # pragma: no cover


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
