"""``serve_exchange`` and ``answer_cancelled`` against a fake exchange: what the one
protocol-neutral function does with the app's answer, with no protocol underneath."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import trio

from trioframe import Method, Request, Response, Router, ServerConfig, Uri, WebSocketConnection
from trioframe._app import AppPolicy, Unanswered, freeze
from trioframe._http.headers import Header, Headers
from trioframe._http.tls import TLSInfo
from trioframe._multipart.decoder import MultipartConfig
from trioframe._multipart.form import Multipart
from trioframe._protocol.errors import UnsendableResponse
from trioframe._protocol.finalize import body_allowed, final_headers
from trioframe._protocol.request_head import RequestHead
from trioframe._request import BodyReader
from trioframe._routing.results import Found
from trioframe._server.exchange import (
    Exchange,
    ExchangeGone,
    Outcome,
    answer_cancelled,
    serve_exchange,
)
from trioframe._server.state import ServingState


class FakeExchange(Exchange):
    """Records what serve_exchange asks of it; the body comes from ``body`` in pieces."""

    def __init__(self, method: bytes, target: bytes, body: list[bytes] | None = None) -> None:
        pieces = body or []
        length = sum(map(len, pieces)) if pieces else None
        head = RequestHead(method, target, "1.1", [(b"host", b"t")], length)
        tls = TLSInfo("TLSv1.3", "http/1.1", "TLS_AES_128_GCM_SHA256")
        super().__init__(head, ("10.0.0.7", 4242), "https", tls, trio.CancelScope())
        self._body = list(pieces)
        self.calls: list[tuple[Any, ...]] = []
        self.answer: tuple[int, str] | None = None
        self.fail_on: str | None = None

    def _record(self, *call: Any) -> None:
        self.calls.append(call)
        if self.fail_on == call[0]:
            raise UnsendableResponse(f"refused in {call[0]}")

    async def receive_body(self) -> bytes:
        return self._body.pop(0) if self._body else b""

    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        # Finalised as every protocol finalises a whole response; refused before writing.
        final = final_headers(headers, status, len(body), b"Sun, 06 Nov 1994 08:49:37 GMT")
        sent = body if body_allowed(self.head.method, status) else b""
        self._record("response", status, dict(final), sent)
        self.response_started = True
        return Outcome.KEEP_ALIVE

    async def send_head(self, status: int, headers: list[Header]) -> None:
        self._record("head", status, dict(headers))
        self.response_started = True

    async def send_data(self, data: bytes) -> None:
        self._record("data", data)

    async def send_end(self) -> Outcome:
        self._record("end")
        return Outcome.KEEP_ALIVE

    async def send_error(self, status: int, message: str) -> Outcome:
        self._record("error", status, message)
        return Outcome.LINGER

    async def upgrade(self, headers: list[Header]) -> trio.abc.Stream:
        raise AssertionError("not used here")

    def cancel_answer(self) -> tuple[int, str] | None:
        return self.answer

    def cancel_cause(self) -> str | None:
        return "shutdown" if self.answer is not None else None

    def refuse_body(self) -> None:
        self._record("refuse_body")

    def abort(self) -> Outcome:
        self._record("abort")
        return Outcome.CLOSE


def state_for(router: Router, **settings: Any) -> ServingState:
    config = ServerConfig(**settings)
    app = freeze(router, AppPolicy(max_body_size=config.max_body_size))
    return ServingState.create(app, config)


async def hello() -> Response:
    return Response.text("Hello, World!")


async def chunks() -> AsyncIterator[bytes]:
    yield b"one"
    yield b""
    yield b"two"


async def streamed() -> Response:
    return Response.stream(chunks())


async def echo(request: Request) -> Response:
    return Response.json(
        {
            "method": str(request.method),
            "uri": str(request.uri),
            "client": list(request.client or ()),
            "scheme": request.scheme,
            "tls": None if request.tls is None else request.tls.version,
            "body": request.body.decode(),
            "version": request.version,
            "headers": request.headers.to_dict(),
            "content_length": request.content_length,
            "connect_protocol": request.connect_protocol,
            "shutdown": request.shutdown_signal is not None,
            "params": request.params,
            "extensions": len(request.extensions),
        }
    )


ROUTER = Router().get("/", hello).get("/stream", streamed).post("/echo", echo)


async def test_a_bytes_response_is_finalised_and_written_whole() -> None:
    exchange = FakeExchange(b"GET", b"/")
    await serve_exchange(exchange, state_for(ROUTER))
    [(kind, status, headers, body)] = exchange.calls
    assert (kind, status, body) == ("response", 200, b"Hello, World!")
    assert headers[b"content-length"] == b"13"
    assert headers[b"content-type"] == b"text/plain; charset=utf-8"
    assert b"date" in headers


async def test_head_gets_the_get_headers_and_no_body() -> None:
    exchange = FakeExchange(b"HEAD", b"/")
    await serve_exchange(exchange, state_for(ROUTER))
    [(_, _, headers, body)] = exchange.calls
    assert headers[b"content-length"] == b"13" and body == b""


async def test_a_streamed_body_is_head_data_and_end_without_empty_chunks() -> None:
    exchange = FakeExchange(b"GET", b"/stream")
    await serve_exchange(exchange, state_for(ROUTER))
    kinds = [call[0] for call in exchange.calls]
    assert kinds == ["head", "data", "data", "end"]
    assert [call[1] for call in exchange.calls if call[0] == "data"] == [b"one", b"two"]
    assert b"content-length" not in exchange.calls[0][2]


async def test_the_request_is_built_from_the_exchange() -> None:
    # Every field serve_exchange passes (positionally: a field out of place shows here).
    exchange = FakeExchange(b"POST", b"/echo?x=1", [b"ab", b"cd"])
    await serve_exchange(exchange, state_for(ROUTER))
    [(_, status, _, body)] = exchange.calls
    assert status == 200
    assert json.loads(body) == {
        "method": "POST",
        "uri": "/echo?x=1",
        "client": ["10.0.0.7", 4242],
        "scheme": "https",
        "tls": "TLSv1.3",
        "body": "abcd",
        "version": "1.1",
        "headers": {"host": "t"},
        "content_length": 4,
        "connect_protocol": None,
        "shutdown": True,
        "params": {},
        "extensions": 0,
    }


class ArrivedBodyExchange(FakeExchange):
    """A body that has all arrived: ``take_whole_body`` hands it over in one step."""

    def take_whole_body(self) -> bytes | None:
        whole, self._body = b"".join(self._body), []
        return whole


@pytest.mark.parametrize(
    "exchange_class", [FakeExchange, ArrivedBodyExchange], ids=["read", "arrived"]
)
@pytest.mark.parametrize(("limit", "status"), [(3, 413), (4, 200), (5, 200)])
async def test_a_body_over_the_limit_is_413_and_the_rest_is_refused(
    exchange_class: type[FakeExchange], limit: int, status: int
) -> None:
    # Read piece by piece, or taken whole in one step: the same limit, the same answers.
    exchange = exchange_class(b"POST", b"/echo", [b"ab", b"cd"])
    exchange.head = RequestHead(b"POST", b"/echo", "1.1", [], None)  # no declared length
    await serve_exchange(exchange, state_for(ROUTER, max_body_size=limit))
    [response] = [call for call in exchange.calls if call[0] == "response"]
    assert response[1] == status
    if status == 200:
        assert json.loads(response[3])["body"] == "abcd"
    assert (("refuse_body",) in exchange.calls) is (status == 413)


async def test_a_response_the_protocol_refuses_is_a_500() -> None:
    exchange = FakeExchange(b"GET", b"/")
    exchange.fail_on = "response"
    await serve_exchange(exchange, state_for(ROUTER))
    assert exchange.calls[-1] == ("error", 500, "Internal Server Error")


async def test_a_refusal_once_the_head_is_out_aborts() -> None:
    exchange = FakeExchange(b"GET", b"/stream")
    exchange.fail_on = "data"
    await serve_exchange(exchange, state_for(ROUTER))
    assert exchange.calls[-1] == ("abort",)
    assert not [call for call in exchange.calls if call[0] == "error"]


async def test_an_app_that_raises_despite_its_promise_is_a_500(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = state_for(ROUTER)

    async def broken(request: Request) -> Response:
        raise RuntimeError("a bug in the app layer")

    def route(self: object, method: str, raw_path: str, upgrade: bool) -> Found[Unanswered]:
        return Found(Unanswered(broken, (), 1024), {})

    monkeypatch.setattr(type(state.app), "route", route)
    exchange = FakeExchange(b"GET", b"/")
    await serve_exchange(exchange, state)
    assert exchange.calls == [("error", 500, "Internal Server Error")]


async def test_a_websocket_upgrade_during_shutdown_is_503() -> None:
    async def session(ws: WebSocketConnection) -> None:
        raise AssertionError("never runs")

    state = state_for(Router().websocket("/ws", session))
    state.shutting_down = True
    headers = [
        (b"host", b"t"),
        (b"upgrade", b"websocket"),
        (b"connection", b"Upgrade"),
        (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ=="),
        (b"sec-websocket-version", b"13"),
    ]
    exchange = FakeExchange(b"GET", b"/ws")
    exchange.head = RequestHead(b"GET", b"/ws", "1.1", headers, None)
    await serve_exchange(exchange, state)
    assert exchange.calls == [("error", 503, "the server is shutting down")]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ((408, "request body timed out"), ("error", 408, "request body timed out")),
        (None, ("abort",)),
    ],
)
async def test_answer_cancelled_answers_or_ends(
    answer: tuple[int, str] | None, expected: tuple[Any, ...]
) -> None:
    exchange = FakeExchange(b"GET", b"/")
    exchange.answer = answer
    await answer_cancelled(exchange)
    assert exchange.calls == [expected]


class GoneExchange(FakeExchange):
    """The peer goes away under the first write of the response."""

    async def send_whole(self, status: int, headers: list[Header], body: bytes) -> Outcome:
        self._record("response", status, dict(headers), body)
        raise ExchangeGone


@pytest.mark.parametrize(
    ("exchange", "outcome"),
    [
        (FakeExchange(b"GET", b"/"), Outcome.KEEP_ALIVE),  # what send_whole said
        (FakeExchange(b"GET", b"/stream"), Outcome.KEEP_ALIVE),  # what send_end said
        (FakeExchange(b"GET", b"/missing-body", [b"x"]), Outcome.KEEP_ALIVE),  # a 404
        (GoneExchange(b"GET", b"/"), Outcome.PEER_GONE),
    ],
)
async def test_serve_exchange_returns_how_the_exchange_ended(
    exchange: FakeExchange, outcome: Outcome
) -> None:
    assert await serve_exchange(exchange, state_for(ROUTER)) is outcome


@pytest.mark.parametrize(
    ("fail_on", "outcome"), [("response", Outcome.LINGER), ("data", Outcome.CLOSE)]
)
async def test_a_failed_exchange_ends_as_its_answer_or_abort_says(
    fail_on: str, outcome: Outcome
) -> None:
    exchange = FakeExchange(b"GET", b"/" if fail_on == "response" else b"/stream")
    exchange.fail_on = fail_on
    assert await serve_exchange(exchange, state_for(ROUTER)) is outcome


@pytest.mark.parametrize(
    ("answer", "outcome"), [((408, "slow"), Outcome.LINGER), (None, Outcome.CLOSE)]
)
async def test_answer_cancelled_returns_how_the_exchange_ended(
    answer: tuple[int, str] | None, outcome: Outcome
) -> None:
    exchange = FakeExchange(b"GET", b"/")
    exchange.answer = answer
    assert await answer_cancelled(exchange) is outcome


def test_the_servers_constructor_sets_every_field_of_the_request() -> None:
    """``Request.served`` stores each field itself (no ``__init__`` call): a field added to
    ``Request`` and forgotten there shows here."""
    request = Request.served(
        Method.GET,
        Uri.parse("/a?b=1"),
        "1.1",
        Headers(((b"host", b"t"),)),
        {"id": "7"},
        ("10.0.0.1", 1),
        "https",
        BodyReader(),
        True,
        None,
        None,
        None,
        None,
        ("10.0.0.2", 2),
        ("state",),
        freeze(Router().get("/items/{id}", echo, name="item")).paths,
    )
    assert {field.name for field in attrs.fields(Request)} <= set(vars(request))
    assert request.params == {"id": "7"}
    assert (request.client, request.peer) == (("10.0.0.1", 1), ("10.0.0.2", 2))
    assert request.state(str) == "state"
    assert request.url_for("item", id=8) == "https://t/items/8"


async def test_the_route_decides_the_body_limit_before_the_request_is_built() -> None:
    """The route is matched first: a multipart route's ``max_total_size`` is the limit its
    body reader is built with, other routes' ``max_body_size``."""

    async def upload(parts: Multipart) -> str:
        async for _ in parts:
            pass
        return "never"

    router = (
        Router()
        .post("/echo", echo)
        .nest("/up", Router().post("/", upload).multipart_config(MultipartConfig(max_total_size=3)))
    )
    for path, expected in (
        (b"/echo", "max_body_size (4 bytes)"),
        (b"/up", "max_total_size (3 bytes)"),
    ):
        part = [b"--x", b'\r\nContent-Disposition: form-data; name="a"\r\n\r\n', b"hello"]
        exchange = FakeExchange(b"POST", path, part)
        form = [(b"content-type", b"multipart/form-data; boundary=x")]
        exchange.head = RequestHead(b"POST", path, "1.1", form, None)  # no declared length
        await serve_exchange(exchange, state_for(router, max_body_size=4))
        responses = [call for call in exchange.calls if call[0] == "response"]
        [(_, status, _, body)] = responses
        assert status == 413 and expected in json.loads(body)["message"]
