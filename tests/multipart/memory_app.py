"""The server side of the multipart memory measurement (``test_memory.py`` and
``bench/multipart_memory.py``), run in its own process so that its peak RSS is its own.

    python tests/multipart/memory_app.py UPLOAD_DIR [PORT]

Serves on 127.0.0.1 (``PORT``, default 0: any free port) and prints ``PORT <n>`` once
listening. ``POST /upload`` streams every file field to ``UPLOAD_DIR/<n>-<field name>`` with
``save_to_file`` and answers ``{"files": [[name, size], ...]}``; limits allow 200 MiB.
"""

from __future__ import annotations

import itertools
import pathlib
import sys

import trio

from trioframe import Multipart, MultipartConfig, Response, Router, Server

MiB = 1024 * 1024
CONFIG = MultipartConfig(max_file_size=200 * MiB, max_total_size=200 * MiB)


def build_router(directory: pathlib.Path) -> Router:
    counter = itertools.count()

    async def upload(form: Multipart) -> Response:
        saved = []
        async for field in form:
            if field.is_file:
                path = directory / f"{next(counter)}-{field.name}"
                result = await field.save_to_file(path)
                saved.append([field.name, result.size])
            else:
                await field.bytes()
        return Response.json({"files": saved})

    return Router().post("/upload", upload).multipart_config(CONFIG)


async def main(directory: pathlib.Path, port: int) -> None:
    server = Server(build_router(directory), ("127.0.0.1", port))
    async with trio.open_nursery() as nursery:
        addresses = await nursery.start(server.serve)
        print(f"PORT {addresses[0][1]}", flush=True)


if __name__ == "__main__":
    trio.run(main, pathlib.Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
