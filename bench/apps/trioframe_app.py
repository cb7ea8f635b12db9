"""The benchmark app on trioframe, in one process.

Usage: python bench/apps/trioframe_app.py PORT   (binds 127.0.0.1; SIGINT/SIGTERM stop it)
"""

from __future__ import annotations

import sys

from trioframe import Request, Response, Router, Server


async def plaintext() -> Response:
    return Response.text("Hello, World!")


async def json_message() -> Response:
    return Response.json({"message": "Hello, World!"})


async def user(request: Request) -> Response:
    uid = int(request.params["id"])
    return Response.json({"id": uid, "name": f"user{uid}"})


async def echo(request: Request) -> Response:
    return (
        Response(200)
        .with_body(request.body)
        .with_header("content-type", "application/octet-stream")
    )


router = (
    Router()
    .get("/plaintext", plaintext)
    .get("/json", json_message)
    .get("/users/{id}", user)
    .post("/echo", echo)
)

if __name__ == "__main__":
    Server(router, f"127.0.0.1:{int(sys.argv[1])}").run()
