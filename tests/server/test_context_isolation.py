"""Each request runs in its own copy of the context its connection started with: a
``ContextVar`` that a middleware, a handler, a streamed body or a WebSocket handler sets is
never seen by the next request on the same connection (HTTP/1.1 keep-alive, HTTP/2 streams),
and is seen by the rest of its own request, across its waits.

Over real loopback sockets with httpx as the client; then ``in_context`` itself."""

from __future__ import annotations

import contextvars
import inspect
import traceback
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from typing import Any, cast

import httpx
import pytest
import trio

from trioframe import Request, Response, Router, ServerConfig, WebSocketConnection
from trioframe._server.isolation import in_context
from trioframe.testing import TestClient

from ..loopback._support import serving

pytestmark = pytest.mark.loopback

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")
USER: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="nobody")


async def sets_then_reads() -> Response:
    before = SEEN.get()
    SEEN.set("set by the handler")
    return Response.text(before)


async def waits_between() -> Response:
    before = SEEN.get()
    SEEN.set("mine")
    await trio.lowlevel.checkpoint()
    return Response.json({"before": before, "after": SEEN.get()})


async def reads_body_in_pieces(request: Request) -> Response:
    before = SEEN.get()
    SEEN.set("reading")
    pieces: list[bytes] = []
    await request.read_body(pieces.append)
    return Response.json({"before": before, "after": SEEN.get(), "pieces": len(pieces)})


async def who() -> Response:
    return Response.text(USER.get())


async def streams() -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        yield SEEN.get().encode()
        SEEN.set("set by the stream")
        await trio.lowlevel.checkpoint()
        yield b"," + SEEN.get().encode()

    return Response.stream(chunks())


async def login(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """Sets the current user for the handler, from a header, when there is one."""
    name = request.headers.get("x-user")
    if name is not None:
        USER.set(name)
    return await call_next(request)


ROUTER = (
    Router()
    .middleware(login)
    .get("/", sets_then_reads)
    .get("/waits", waits_between)
    .post("/pieces", reads_body_in_pieces)
    .get("/who", who)
    .get("/stream", streams)
)


def config(http2: bool) -> ServerConfig:
    return ServerConfig(http2=True) if http2 else ServerConfig()


def client(http2: bool) -> httpx.AsyncClient:
    return httpx.AsyncClient(http1=not http2, http2=http2)


VERSIONS = pytest.mark.parametrize("http2", [False, True], ids=["HTTP/1.1", "HTTP/2"])


@VERSIONS
async def test_a_handler_s_variable_is_not_seen_by_the_next_request(http2: bool) -> None:
    async with serving(ROUTER, config(http2)) as served, client(http2) as http:
        responses = [await http.get(served.url + "/") for _ in range(3)]
    assert {r.http_version for r in responses} == {"HTTP/2" if http2 else "HTTP/1.1"}
    assert [r.text for r in responses] == ["unset"] * 3
    assert SEEN.get() == "unset"  # nor by the test's own task


@VERSIONS
async def test_a_middleware_s_variable_is_its_request_s_only(http2: bool) -> None:
    async with serving(ROUTER, config(http2)) as served, client(http2) as http:
        alice = await http.get(served.url + "/who", headers={"x-user": "alice"})
        anonymous = await http.get(served.url + "/who")
        bob = await http.get(served.url + "/who", headers={"x-user": "bob"})
        again = await http.get(served.url + "/who")
    assert [alice.text, anonymous.text, bob.text, again.text] == [
        "alice",
        "nobody",
        "bob",
        "nobody",
    ]


@VERSIONS
async def test_a_request_keeps_its_variable_across_its_waits(http2: bool) -> None:
    async with serving(ROUTER, config(http2)) as served, client(http2) as http:
        waited = [(await http.get(served.url + "/waits")).json() for _ in range(2)]

        async def pieces() -> AsyncIterator[bytes]:
            for _ in range(3):
                yield b"x" * 1000
                await trio.lowlevel.checkpoint()

        posted = [
            (await http.post(served.url + "/pieces", content=pieces())).json() for _ in range(2)
        ]
    assert waited == [{"before": "unset", "after": "mine"}] * 2
    assert [(p["before"], p["after"]) for p in posted] == [("unset", "reading")] * 2
    assert all(p["pieces"] >= 1 for p in posted)


@VERSIONS
async def test_a_streamed_body_s_variable_is_not_seen_by_the_next_request(http2: bool) -> None:
    async with serving(ROUTER, config(http2)) as served, client(http2) as http:
        bodies = [(await http.get(served.url + "/stream")).text for _ in range(2)]
        after = await http.get(served.url + "/")
    assert bodies == ["unset,set by the stream"] * 2
    assert after.text == "unset"


async def test_a_websocket_handler_sees_its_middleware_s_variable() -> None:
    """The session after an upgrade runs in its request's context: its handler sees what
    the middleware set."""

    async def greet(ws: WebSocketConnection) -> None:
        await ws.send_text(USER.get())

    router = Router().middleware(login).websocket("/ws", greet)
    async with TestClient(router) as test, test.websocket("/ws", headers={"x-user": "carol"}) as ws:
        assert await ws.receive_text() == "carol"


@VERSIONS
async def test_each_request_s_telemetry_span_is_current_in_its_handler(http2: bool) -> None:
    """``Telemetry`` makes the request's span current (a context variable of OpenTelemetry's)
    for its handler, across the handler's waits; the next request on the connection starts
    with none of it."""
    from opentelemetry import trace

    from tests.middleware.test_telemetry import Recorded

    seen: list[tuple[int, int]] = []

    async def traced() -> Response:
        before = trace.get_current_span().get_span_context().span_id
        await trio.lowlevel.checkpoint()
        seen.append((before, trace.get_current_span().get_span_context().span_id))
        return Response.text("ok")

    recorded = Recorded()
    router = Router().middleware(recorded.telemetry).get("/traced", traced)
    async with serving(router, config(http2)) as served, client(http2) as http:
        for _ in range(3):
            assert (await http.get(served.url + "/traced")).status_code == 200
    spans = [span.context.span_id for span in recorded.spans.get_finished_spans()]
    assert seen == [(span, span) for span in spans]
    assert len(set(spans)) == 3


# -- in_context ---------------------------------------------------------------------------------

VAR: contextvars.ContextVar[int] = contextvars.ContextVar("var", default=0)


async def test_it_returns_what_the_coroutine_returns_and_keeps_its_context() -> None:
    async def steps() -> list[int]:
        seen = [VAR.get()]
        VAR.set(1)
        await trio.lowlevel.checkpoint()
        seen.append(VAR.get())
        VAR.set(2)
        return seen

    mine = contextvars.copy_context()
    VAR.set(7)
    assert await in_context(mine, steps()) == [0, 1]
    assert VAR.get() == 7
    assert mine[VAR] == 2


async def test_a_coroutine_that_never_waits_returns_at_once() -> None:
    async def at_once() -> str:
        VAR.set(3)
        return "done"

    context = contextvars.Context()
    assert await in_context(context, at_once()) == "done"
    assert context[VAR] == 3 and VAR.get() == 0


class Failed(Exception):
    pass


async def fails_here() -> None:
    raise Failed("inside")


@pytest.mark.parametrize("waits", [False, True], ids=["first step", "later step"])
async def test_an_exception_keeps_its_traceback(waits: bool) -> None:
    async def fails() -> None:
        if waits:
            await trio.lowlevel.checkpoint()
        await fails_here()

    with pytest.raises(Failed) as caught:
        await in_context(contextvars.Context(), fails())
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-2:] == ["fails", "fails_here"]


async def test_a_cancellation_is_thrown_into_the_coroutine_inside_its_context() -> None:
    seen: list[int] = []

    async def sleeps() -> None:
        VAR.set(5)
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            seen.append(VAR.get())
            raise

    with trio.CancelScope() as scope:
        scope.cancel()  # delivered when the coroutine blocks
        await in_context(contextvars.Context(), sleeps())
    assert scope.cancelled_caught
    assert seen == [5] and VAR.get() == 0


async def test_a_thrown_exception_the_coroutine_handles_lets_it_return() -> None:
    async def handles() -> str:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            return f"handled {VAR.get()}"
        return "not cancelled"

    context = contextvars.Context()
    context.run(VAR.set, 9)
    with trio.CancelScope() as scope:
        scope.cancel()
        result = await in_context(context, handles())
    assert result == "handled 9"


@types.coroutine
def suspend() -> Generator[str, Any, None]:
    """One step that yields to whoever drives the coroutine (no trio needed)."""
    yield "a trap"


def test_close_closes_the_coroutine_inside_its_context() -> None:
    closed: list[int] = []

    async def waits() -> None:
        VAR.set(4)
        try:
            await suspend()
        finally:
            closed.append(VAR.get())

    inner = waits()
    driver = cast(Generator[Any, Any, None], in_context(contextvars.Context(), inner))
    assert driver.send(None) == "a trap"  # the trap passes through unchanged
    driver.close()
    assert closed == [4]
    assert inspect.getcoroutinestate(inner) == inspect.CORO_CLOSED
