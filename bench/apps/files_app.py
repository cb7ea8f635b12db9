"""File downloads for bench/files.py: ``GET /f/{name}`` from the directory given.

trioframe: ``python bench/apps/files_app.py PORT DIR`` (Response.file; sendfile on plain
HTTP/1.1). Starlette: ``bench.apps.files_app:starlette_app`` with ``FILES_DIR`` set (its
FileResponse), served by Uvicorn or Hypercorn.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from trioframe import Path as PathParam
from trioframe import Response, Router

FILES = Path(os.environ.get("FILES_DIR", "."))


def trioframe_router(directory: Path) -> Router:
    async def serve(name: PathParam[str]) -> Response:
        return Response.file(directory / name)

    return Router().get("/f/{name}", serve)


def _starlette() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse
    from starlette.routing import Route

    async def serve(request: Request) -> FileResponse:
        return FileResponse(FILES / request.path_params["name"])

    return Starlette(routes=[Route("/f/{name}", serve)])


# bench.apps.files_app:starlette_app (Hypercorn's loader needs a real attribute); without
# Starlette installed the module still serves trioframe.
with contextlib.suppress(ImportError):
    starlette_app = _starlette()


if __name__ == "__main__":
    import logging

    from trioframe import Server

    logging.basicConfig(level=logging.WARNING)
    Server(trioframe_router(Path(sys.argv[2])), ("127.0.0.1", int(sys.argv[1]))).run()
