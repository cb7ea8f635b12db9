"""The benchmark app on Starlette, served by Hypercorn (trio worker) and by Uvicorn.

Import path from the repository root: bench.apps.starlette_app:app
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route


async def plaintext(request: Request) -> Response:
    return PlainTextResponse("Hello, World!")


async def json_message(request: Request) -> Response:
    return JSONResponse({"message": "Hello, World!"})


async def user(request: Request) -> Response:
    uid: int = request.path_params["id"]
    return JSONResponse({"id": uid, "name": f"user{uid}"})


async def echo(request: Request) -> Response:
    return Response(await request.body(), media_type="application/octet-stream")


app = Starlette(
    routes=[
        Route("/plaintext", plaintext),
        Route("/json", json_message),
        Route("/users/{id:int}", user),
        Route("/echo", echo, methods=["POST"]),
    ]
)
