"""Starlette's bench app on Granian, served from this one process (Granian's embedded server).

    python -m bench.apps.granian_embed PORT [--http 1|2] [--task-impl asyncio|rust]

run from the repository root. Granian's command line serves from forked worker processes, which valgrind's gdbserver does not
reach, so callgrind could not be told when to count. The embedded server runs Granian's Rust
HTTP stack and its ASGI bridge in the process that starts it (one Rust runtime thread, the
asyncio loop), where bench/instructions.py can count a request's work. ``--task-impl rust``
runs the app's coroutines on Granian's own Rust task implementation instead of asyncio's
tasks (Granian's default is asyncio).
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from granian.constants import HTTPModes, Interfaces, TaskImpl
from granian.server.embed import Server

from bench.apps.starlette_app import app


async def serve(port: int, http: str, task_impl: str) -> None:
    server = Server(
        app,
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGINL,
        http=HTTPModes(http),
        websockets=False,
        log_enabled=False,
        task_impl=TaskImpl(task_impl),
    )
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, server.stop)
    await server.serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--http", choices=["1", "2"], default="1")
    parser.add_argument("--task-impl", choices=["asyncio", "rust"], default="asyncio")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.http, args.task_impl))


if __name__ == "__main__":
    main()
