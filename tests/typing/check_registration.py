"""Type tests of the registration API, checked by ``mypy --strict`` in the ``typing`` nox
session (not run by pytest). Each ``# type: ignore[...]`` below marks a call mypy must
reject: if it stopped rejecting one, ``--strict`` (warn_unused_ignores) would fail on the
ignore that is no longer needed."""

from __future__ import annotations

from trioframe import MultipartConfig, Next, Request, Response, Router, freeze


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


# The registration keywords, on every call and decorator; the frozen app's paths.
keyworded = (
    Router()
    .get("/k", handler, name="k", status=201, tags=["a"], summary="s", description="d")
    .post("/k", handler, deprecated=True, include_in_schema=False, responses={404: "gone"})
    .route("/r", handler, ["GET"], responses={200: list[Store], 201: Store})
    .websocket("/ws", handler, subprotocols=["v1"], name="ws")
    .nest("/api", Router(), name="api")
)


@keyworded.delete("/d", name="d", tags=("x",))
async def deleted() -> Response:
    return Response.text("ok")


path: str = freeze(keyworded).path_for("k", item_id=1)

Router().get("/k", handler, nmae="k")  # type: ignore[call-overload]
Router().get("/k", handler, status="201")  # type: ignore[call-overload]
Router().get("/k", handler, tags=[1])  # type: ignore[list-item]
Router().get("/k", handler, responses={"404": "gone"})  # type: ignore[dict-item]
Router().nest("/api", Router(), name=1)  # type: ignore[arg-type]
