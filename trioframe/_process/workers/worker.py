"""A worker process: ``python -m trioframe._process.workers.worker``, started by the supervisor.

It reads its ``WorkerSpec`` (pickled, on stdin), imports the router, and serves it on the
inherited sockets in its own trio run. It talks to the supervisor over a pipe, one line per
message: ``ready`` once serving (lifespans entered), ``beat`` every second from a task of its
trio loop (a loop blocked by a handler stops beating, and the supervisor replaces the worker),
``retire`` once it has served its share of requests, ``failed <reason>`` when startup fails.
SIGTERM (or SIGINT) shuts it down gracefully. If the supervisor goes away (the pipe breaks),
the worker shuts down gracefully too.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import socket
import sys

import attrs
import trio

from ..._chain import Next
from ..._errors import ConfigurationError
from ..._request import Request
from ..._response import Response
from ..._routing.router import Router
from ..._server.serve import Server
from ..errors import StartupFailure, lifespan_failure
from ..signals import watch_signals
from .sockets import listen
from .spec import BEAT_INTERVAL, WorkerSpec, log_format
from .target import import_router

log = logging.getLogger("trioframe")


class _NoServingLine(logging.Filter):
    """The supervisor logs one serving line for the fleet; a worker's own is left out."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("trioframe serving on")


class _Worker:
    def __init__(self, spec: WorkerSpec, server: Server) -> None:
        self.spec = spec
        self.server = server
        self.channel = trio.lowlevel.FdStream(os.dup(spec.channel_fd))
        self.served = 0
        #: serving: its lifespans are entered and the supervisor was told
        self.ready = False
        self.retire = trio.Event()
        self.sending = trio.Lock()  # the heartbeat and the other messages share the pipe

    async def say(self, message: bytes) -> None:
        """Send one line to the supervisor; a broken pipe means it is gone: shut down."""
        try:
            async with self.sending:
                await self.channel.send_all(message + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.warning("the supervisor is gone: shutting down")
            self.server.shutdown()

    async def beat(self) -> None:
        while True:
            await self.say(b"beat")
            await trio.sleep(BEAT_INTERVAL)

    async def ask_to_retire(self) -> None:
        await self.retire.wait()
        await self.say(b"retire")

    def count_requests(self, router: Router) -> None:
        """Count the requests ``router`` answers, with a middleware around all of them (only
        with a request budget; before the router is frozen)."""
        budget = self.spec.max_requests
        if budget is None:
            return

        async def counted(request: Request, next_: Next) -> Response:
            self.served += 1
            if self.served == budget:
                self.retire.set()
            return await next_(request)

        router.middleware(counted)

    async def run(self, sockets: list[socket.socket]) -> None:
        server = self.server
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_signals, server, nursery.cancel_scope)
            nursery.start_soon(self.beat)

            async def serve(task_status: trio.TaskStatus[object]) -> None:
                await server.serve(sockets=sockets, task_status=task_status)
                nursery.cancel_scope.cancel()

            try:
                await nursery.start(serve)
            except Exception as error:
                await self.say(b"failed " + _reason(server, error).encode("utf-8", "replace"))
                raise
            await self.say(b"ready")
            self.ready = True
            nursery.start_soon(self.ask_to_retire)


def _reason(server: Server, error: BaseException) -> str:
    """One line saying why startup failed."""
    lifecycle = server._lifecycle
    if lifecycle is not None and lifecycle.failed is not None:
        return lifespan_failure(lifecycle.failed.name, error)
    return f"{type(error).__name__}: {error}"


def main() -> int:
    """Run one worker; the exit status is 0 after a graceful shutdown, 1 when a task of the
    app nursery failed while serving (the supervisor starts another), 3 when startup
    failed."""
    spec: WorkerSpec = pickle.load(sys.stdin.buffer)
    logging.basicConfig(level=spec.log_level, format=log_format())
    log.addFilter(_NoServingLine())
    sockets = [socket.socket(fileno=fd) for fd in spec.socket_fds]
    config = attrs.evolve(spec.config, workers=1)
    try:
        router = import_router(spec.target)
        listen(sockets)  # only now (see ``sockets``): a broken application is sent nothing
        server = Server(router, (spec.host, spec.port), config)
        worker = _Worker(spec, server)
        worker.count_requests(router)
    except Exception as error:
        reason = f"cannot load {spec.target}: {type(error).__name__}: {error}"
        if isinstance(error, (ConfigurationError, StartupFailure)):
            reason = str(error)
        with os.fdopen(spec.channel_fd, "wb", buffering=0) as channel:
            channel.write(b"failed " + reason.encode("utf-8", "replace") + b"\n")
        return 3
    try:
        trio.run(functools.partial(worker.run, sockets))
    except BaseException:
        if worker.ready:  # a task of the app nursery failed (the server logged it), then drained
            return 1
        log.debug("worker startup failed", exc_info=True)  # the supervisor was told (failed ...)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
