"""Middleware: a custom timing layer, bearer authentication that hands the user to handlers
as an extension, access logging and CORS.

Run ``python examples/middleware.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then::

    curl -i http://127.0.0.1:3000/public
    curl -i -H 'Authorization: Bearer secret-token' http://127.0.0.1:3000/api/me
"""

from __future__ import annotations

import logging
import os

import attrs
import trio

from trioframe import (
    Cors,
    Error,
    Extension,
    LoggerMiddleware,
    Method,
    Next,
    Request,
    Response,
    Router,
    Server,
)

TOKENS = {"secret-token": "ada"}


@attrs.frozen
class User:
    name: str


async def timing(request: Request, next: Next) -> Response:
    """Adds ``x-response-time`` (milliseconds) to every response."""
    start = trio.current_time()
    response = await next(request)
    elapsed = (trio.current_time() - start) * 1000
    return response.with_header("x-response-time", f"{elapsed:.2f}ms")


async def bearer_auth(request: Request, next: Next) -> Response:
    """Resolves ``Authorization: Bearer <token>`` to a ``User`` for the handlers below it."""
    scheme, _, token = (request.header("authorization") or "").partition(" ")
    name = TOKENS.get(token) if scheme.lower() == "bearer" else None
    if name is None:
        raise Error.unauthorized(
            "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"}
        )
    request.extensions.insert(User(name))
    return await next(request)


async def public() -> Response:
    return Response.text("anyone can see this")


async def me(user: Extension[User]) -> Response:
    return Response.json({"name": user.name})


cors = (
    Cors()
    .allow_any_origin()
    .allowed_methods([Method.GET, Method.POST, Method.PUT, Method.DELETE])
    .build()
)
api = Router().middleware(bearer_auth).get("/me", me, responses={401: "no valid token"})
router = (
    Router()
    .middleware(timing)
    .middleware(LoggerMiddleware())
    .middleware(cors)
    .get("/public", public)
    .nest("/api", api)
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
