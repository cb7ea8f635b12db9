"""The smallest trioframe app: ``python examples/hello.py`` serves on 127.0.0.1:3000
(the ``PORT`` environment variable picks another port).

Try ``curl http://127.0.0.1:3000/`` and ``curl http://127.0.0.1:3000/users/1``.
"""

from __future__ import annotations

import logging
import os

from trioframe import Error, Path, Response, Router, Server


async def hello() -> Response:
    return Response.text("Hello from trioframe!")


async def get_user(user_id: Path[int]) -> Response:
    if user_id != 1:
        raise Error.not_found(f"user {user_id}")
    return Response.json({"id": user_id, "name": "Ada"})


router = (
    Router()
    .get("/", hello)
    .get("/users/{user_id}", get_user, responses={404: "no user has this id"})
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
