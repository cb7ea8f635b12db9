"""Type tests of the registration API, checked by ``mypy --strict`` in the ``typing`` nox
session (not run by pytest). Each ``# type: ignore[...]`` below marks a call mypy must
reject: if it stopped rejecting one, ``--strict`` (warn_unused_ignores) would fail on the
ignore that is no longer needed."""

from __future__ import annotations

from trioframe import MultipartConfig, Next, Request, Response, Router


async def handler() -> Response:
    return Response.text("ok")


def sync_handler() -> Response:
    return Response.text("not awaitable")


async def middleware(request: Request, next: Next) -> Response:
    return await next(request)


class Store:
    pass


# What is accepted: async handlers (also as decorators), middleware, any state value, limits.
router = (
    Router()
    .get("/", handler)
    .post("/", handler)
    .middleware(middleware)
    .state(Store())
    .multipart_config(MultipartConfig())
)


@router.put("/decorated")
async def decorated() -> Response:
    return Response.text("ok")


# What is refused before the program runs.
Router().get("/sync", sync_handler)  # type: ignore[arg-type]
Router().websocket("/ws", sync_handler)  # type: ignore[arg-type]
Router().fallback(sync_handler)  # type: ignore[arg-type]
Router().middleware("not a middleware")  # type: ignore[arg-type]
Router().middleware(handler)  # type: ignore[arg-type]
Router().multipart_config({"max_file_size": 10})  # type: ignore[arg-type]
