"""The app the HTTP/2 tests drive: handlers the test can hold, release, pace and watch.

``Lab`` is a middleware (it sees the request before its body is read) answering:

- ``/wait/NAME``: blocks until ``release(NAME)``; records ``NAME`` in ``cancelled`` if it is
  cancelled instead;
- ``/late/NAME``: answers 1000 bytes once ``release(NAME)``;
- ``/drip/NAME``: a streamed body: ``b"first"``, then the rest once ``release(NAME)``;
- ``/hold/NAME``: reads nothing until ``release(NAME)``, then reads the whole body;
- ``/pace/NAME``: reads one body chunk per ``allow(NAME)``; ``read[NAME]`` counts the bytes;
- ``/info``: reads the body, answers the request's version, method, target, Host, body size;
- ``/big/N``: answers ``N`` bytes (``b"x" * N``);

and hands anything else to the routes of ``router()`` (``GET /``, ``POST /echo``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import AsyncIterator

import trio

from trioframe import Request, Response, Router
from trioframe._chain import Next


class Lab:
    def __init__(self) -> None:
        self.started: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.released: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.finished: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.cancelled: list[str] = []
        self.read: defaultdict[str, int] = defaultdict(int)
        self._pace: dict[str, tuple[trio.MemorySendChannel[None], trio.MemoryReceiveChannel[None]]]
        self._pace = {}

    def release(self, name: str) -> None:
        self.released[name].set()

    def allow(self, name: str, chunks: int = 1) -> None:
        for _ in range(chunks):
            self._channel(name)[0].send_nowait(None)

    def _channel(
        self, name: str
    ) -> tuple[trio.MemorySendChannel[None], trio.MemoryReceiveChannel[None]]:
        if name not in self._pace:
            self._pace[name] = trio.open_memory_channel[None](math.inf)
        return self._pace[name]

    async def _drip(self, name: str) -> AsyncIterator[bytes]:
        yield b"first"
        try:
            await self.released[name].wait()
        except trio.Cancelled:
            self.cancelled.append(name)
            raise
        yield b"rest"

    async def __call__(self, request: Request, next_: Next) -> Response:
        kind, _, name = request.path.strip("/").partition("/")
        try:
            if kind == "wait":
                self.started[name].set()
                await self.released[name].wait()
                return Response.text(f"released {name}")
            if kind == "late":
                self.started[name].set()
                await self.released[name].wait()
                return Response(200, b"x" * 1000)
            if kind == "drip":
                self.started[name].set()
                return Response.stream(self._drip(name))
            if kind == "hold":
                self.started[name].set()
                await self.released[name].wait()
                body = await request.read_body()
                return Response.text(f"held {len(body)}")
            if kind == "pace":
                self.started[name].set()
                async for _ in self._channel(name)[1]:
                    chunk = await request.body_reader()
                    self.read[name] += len(chunk)
                    if not chunk:
                        break
                return Response.text(f"paced {self.read[name]}")
            if kind == "info":
                body = await request.read_body()
                return Response.json(
                    {
                        "version": request.version,
                        "method": str(request.method),
                        "target": str(request.uri),
                        "host": request.header("host"),
                        "size": len(body),
                    }
                )
            if kind == "big":
                return Response(200, b"x" * int(name))
        except trio.Cancelled:
            self.cancelled.append(name)
            raise
        finally:
            self.finished[name].set()
        return await next_(request)


async def hello() -> Response:
    return Response.text("hello")


async def echo(request: Request) -> Response:
    return Response(200, request.body)


def router(lab: Lab) -> Router:
    return Router().middleware(lab).get("/", hello).post("/echo", echo)
