"""An example app of examples/ served over HTTP/2 (h2c prior knowledge) and HTTP/1.1.

Usage: python bench/apps/example_h2.py EXAMPLE PORT   (EXAMPLE: a file of examples/ whose
``router`` is served; binds 127.0.0.1; SIGINT/SIGTERM stop it gracefully). The server runs
with ``ServerConfig(http2=True)`` and every other setting at its default; warnings and errors
are logged to stderr.
"""

from __future__ import annotations

import importlib.util
import logging
import sys

from trioframe import Router, Server, ServerConfig


def load_router(path: str) -> Router:
    spec = importlib.util.spec_from_file_location("example", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    router = module.router
    if not isinstance(router, Router):
        raise SystemExit(f"{path}: `router` is not a trioframe Router")
    return router


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    example, port = sys.argv[1], int(sys.argv[2])
    Server(load_router(example), f"127.0.0.1:{port}", ServerConfig(http2=True)).run()
