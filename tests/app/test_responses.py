"""``Response`` builders and modifiers (docs/responses.md) and handler return conversion.

Each builder is checked on the wire through the ``TestClient``: status, content type and
body, the chainable modifiers and their header validation, JSON serialization of attrs
classes, dataclasses and request ``Headers``, redirects, chunked streaming, server-sent
events, and what each plain return value (``str``, ``bytes``, ``dict``, ...) becomes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import pytest
import trio

from trioframe import Error, Request, Response, Router, ServerSentEvent, StatusCode
from trioframe._errors import InternalServerError
from trioframe.testing import TestClient

from .helpers import assert_error_body


@attrs.define
class Point:
    x: int
    y: int


@dataclasses.dataclass
class User:
    id: int
    name: str
    tags: list[str]


@attrs.define
class Team:
    name: str
    members: list[User]
    origin: Point


async def fetch(handler: Callable[..., Awaitable[Any]], method: str = "GET", **kwargs: Any) -> Any:
    """Serve ``handler`` at ``/`` and return the client's response to one request."""
    router = Router().route("/", handler, methods=[method])
    async with TestClient(router) as client:
        return await client.request(method, "/", **kwargs)


# -- text, html, json -------------------------------------------------------------------------


async def test_text_response() -> None:
    async def handler() -> Response:
        return Response.text("héllo")

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.content == "héllo".encode()
    assert response.headers["content-length"] == str(len("héllo".encode()))


async def test_html_response() -> None:
    async def handler() -> Response:
        return Response.html("<h1>hi</h1>")

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.text == "<h1>hi</h1>"


async def test_json_response_with_nested_lists_and_dicts() -> None:
    value = {"a": [1, 2, {"b": None, "c": [True, False]}], "d": {"e": "ü", "f": 1.5}}

    async def handler() -> Response:
        return Response.json(value)

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == value


async def test_json_of_attrs_class_and_dataclass_nested() -> None:
    team = Team("core", [User(1, "Ada", ["admin"]), User(2, "Bob", [])], Point(3, 4))

    async def handler() -> Response:
        return Response.json(team)

    response = await fetch(handler)
    assert response.json() == {
        "name": "core",
        "members": [
            {"id": 1, "name": "Ada", "tags": ["admin"]},
            {"id": 2, "name": "Bob", "tags": []},
        ],
        "origin": {"x": 3, "y": 4},
    }


async def test_json_of_request_headers() -> None:
    async def handler(request: Request) -> Response:
        return Response.json(request.headers)

    response = await fetch(
        handler,
        headers=[("X-Single", "one"), ("X-Repeated", "a"), ("x-repeated", "b")],
    )
    body = response.json()
    assert body["x-single"] == "one"
    assert body["x-repeated"] == "a, b"
    assert body["host"] == "testserver"
    assert all(name == name.lower() for name in body)


async def test_unserializable_json_value_raises_error_at_the_call_and_answers_500() -> None:
    raised: list[BaseException] = []

    async def handler() -> Response:
        try:
            return Response.json({"when": object()})
        except Exception as exc:
            raised.append(exc)
            raise

    response = await fetch(handler)
    assert_error_body(response, 500)
    assert len(raised) == 1
    assert isinstance(raised[0], Error)
    assert raised[0].status == 500


# -- status-only responses and modifiers ------------------------------------------------------


async def test_response_with_status_only_is_exactly_that() -> None:
    async def handler() -> Response:
        return Response(201)

    response = await fetch(handler, method="POST")
    assert response.status_code == 201
    assert response.content == b""
    assert "content-type" not in response.headers
    assert response.headers.get("content-length", "0") == "0"


async def test_response_new_204_has_no_body_and_no_content_type() -> None:
    async def handler() -> Response:
        return Response.new(StatusCode.NO_CONTENT)

    response = await fetch(handler, method="DELETE")
    assert response.status_code == 204
    assert response.content == b""
    assert "content-type" not in response.headers


@pytest.mark.parametrize("status", [400, 404, 500, 503])
async def test_error_status_built_by_the_handler_gets_no_error_body(status: int) -> None:
    async def handler() -> Response:
        return Response.new(status)

    response = await fetch(handler)
    assert response.status_code == status
    assert response.content == b""


@pytest.mark.parametrize(
    ("body", "expected"), [("text é", "text é".encode()), (b"\x00\xffraw", b"\x00\xffraw")]
)
async def test_with_body_str_and_bytes(body: str | bytes, expected: bytes) -> None:
    async def handler() -> Response:
        return Response(200).with_body(body)

    response = await fetch(handler)
    assert response.content == expected
    assert response.headers["content-length"] == str(len(expected))


async def test_with_status_and_with_header_chain_and_replace() -> None:
    async def handler() -> Response:
        return (
            Response.json({"id": 1})
            .with_status(StatusCode.CREATED)
            .with_header("X-Thing", "first")
            .with_header("x-thing", "second")
            .with_header("Content-Type", "application/vnd.test+json")
        )

    response = await fetch(handler, method="POST")
    assert response.status_code == 201
    assert response.headers.get_list("x-thing") == ["second"]
    assert response.headers.get_list("content-type") == ["application/vnd.test+json"]
    assert response.json() == {"id": 1}


def test_modifiers_return_the_same_response() -> None:
    response = Response(200)
    assert response.with_body("x") is response
    assert response.with_status(202) is response
    assert response.with_header("x-a", "b") is response


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("X-Bad", "a\r\nInjected: yes"),
        ("X-Bad", "a\nb"),
        ("X-Bad", "a\rb"),
        ("X-Bad", "a\x00b"),
        ("X-Bad\r\nInjected", "v"),
        ("X-Bad\n", "v"),
        ("X-\rBad", "v"),
        ("X-Bad\x00", "v"),
    ],
)
def test_with_header_rejects_cr_lf_nul(name: str, value: str) -> None:
    with pytest.raises(ValueError):
        Response.text("x").with_header(name, value)


# RFC 9110 section 5.5: every control character but HTAB is forbidden in a field value.
FORBIDDEN_IN_VALUES = [chr(c) for c in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F)]


@pytest.mark.parametrize("control", FORBIDDEN_IN_VALUES, ids=lambda c: f"0x{ord(c):02x}")
def test_with_header_and_append_header_refuse_every_control_but_htab(control: str) -> None:
    with pytest.raises(ValueError, match="control character"):
        Response.text("x").with_header("x-a", f"a{control}b")
    with pytest.raises(ValueError, match="control character"):
        Response.text("x").append_header("x-a", f"a{control}b")


def test_a_header_set_again_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from trioframe import _response

    calls: list[tuple[str, str]] = []
    original = _response._validate_header

    def counting(name: str, value: str) -> tuple[bytes, bytes]:
        calls.append((name, value))
        return original(name, value)

    monkeypatch.setattr(_response, "_validate_header", counting)
    monkeypatch.setattr(_response, "_CHECKED", {})
    for _ in range(3):
        assert Response.text("x").with_header("X-Once", " v ").header("x-once") == "v"
    assert calls == [("X-Once", " v ")]
    with pytest.raises(ValueError):  # a refused field is never remembered as valid
        Response.text("x").with_header("X-Once", "v\r\n")
    with pytest.raises(ValueError):
        Response.text("x").with_header("X-Once", "v\r\n")
    assert ("X-Once", "v\r\n") not in _response._CHECKED


def test_the_header_cache_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    from trioframe import _response

    monkeypatch.setattr(_response, "_CHECKED", {})
    for number in range(_response._MAX_CHECKED + 3):
        Response.text("x").with_header("x-n", str(number))
    assert len(_response._CHECKED) == 3


def test_with_header_keeps_htab_and_obs_text() -> None:
    response = Response.text("x").with_header("x-a", "a\tb \u00e9")
    assert response.header("x-a") == "a\tb \u00e9"


@pytest.mark.parametrize("control", ["\x0b", "\x0c", "\x7f", "\x1b"])
def test_redirect_refuses_a_location_with_a_control_character(control: str) -> None:
    # Response.redirect(next) of client input must not build a response h11 cannot write.
    with pytest.raises(ValueError):
        Response.redirect(f"/next{control}evil")


@pytest.mark.parametrize("name", ["Transfer-Encoding", "transfer-encoding"])
def test_transfer_encoding_is_the_servers(name: str) -> None:
    with pytest.raises(ValueError, match="set by the server"):
        Response.text("x").with_header(name, "chunked")


@pytest.mark.parametrize("status", [-1, 0, 99, 600, 999, 1000, 10_000])
def test_a_status_outside_100_599_is_refused_where_it_is_built(status: int) -> None:
    with pytest.raises(ValueError, match="not an HTTP status"):
        Response(status)
    with pytest.raises(ValueError, match="not an HTTP status"):
        Response.text("x").with_status(status)


@pytest.mark.parametrize("status", [100, 200, 599])
def test_statuses_at_the_edges_of_the_range_are_accepted(status: int) -> None:
    assert Response(status).status == status


async def test_header_value_error_in_a_handler_answers_500() -> None:
    async def handler() -> Response:
        return Response.text("x").with_header("X-Bad", "a\r\nb")

    assert_error_body(await fetch(handler), 500)


# -- validation errors and redirects ----------------------------------------------------------


async def test_validation_error_response() -> None:
    async def handler() -> Response:
        return Response.validation_error(["name is required", "age must be positive"])

    response = await fetch(handler, method="POST")
    body = assert_error_body(response, 422)
    assert body["errors"] == ["name is required", "age must be positive"]


async def test_redirect_defaults_to_302_with_location() -> None:
    async def handler() -> Response:
        return Response.redirect("/elsewhere?x=1")

    response = await fetch(handler)
    assert response.status_code == 302
    assert response.headers["location"] == "/elsewhere?x=1"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirect_statuses(status: int) -> None:
    async def handler() -> Response:
        return Response.redirect("https://example.com/new", status=status)

    response = await fetch(handler)
    assert response.status_code == status
    assert response.headers["location"] == "https://example.com/new"


@pytest.mark.parametrize("status", [200, 300, 304, 305, 306, 309, 404])
def test_redirect_with_a_non_redirect_status_raises(status: int) -> None:
    with pytest.raises(ValueError):
        Response.redirect("/x", status=status)


# -- streaming --------------------------------------------------------------------------------


async def test_stream_sends_each_chunk_as_produced(autojump_clock: trio.abc.Clock) -> None:
    release = trio.Event()

    async def chunks() -> AsyncIterator[str | bytes]:
        yield "first;"
        # The client must see the first chunk before the second one is produced.
        await release.wait()
        yield b"second;"
        yield "d\u00e9j\u00e0"

    async def handler() -> Response:
        return Response.stream(chunks(), content_type="text/csv")

    router = Router().get("/stream", handler)
    with trio.fail_after(30):
        async with TestClient(router) as client, client.stream("GET", "/stream") as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/csv"
            assert response.headers["transfer-encoding"] == "chunked"
            assert "content-length" not in response.headers
            received = response.aiter_raw()
            assert await received.__anext__() == b"first;"
            release.set()
            rest = [chunk async for chunk in received]
    assert b"".join(rest) == b"second;" + "déjà".encode()


async def test_stream_default_content_type_and_full_body() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for i in range(5):
            yield b"%d," % i

    async def handler() -> Response:
        return Response.stream(chunks())

    router = Router().get("/s", handler)
    async with TestClient(router) as client, client.stream("GET", "/s") as response:
        assert response.headers["content-type"] == "application/octet-stream"
        body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body == b"0,1,2,3,4,"


# -- server-sent events -----------------------------------------------------------------------


async def test_sse_framing_of_strings_and_events() -> None:
    async def events() -> AsyncIterator[str | ServerSentEvent]:
        yield "hello"
        yield "two\nlines"
        yield ServerSentEvent("payload", event="update", id="7", retry=1500)
        yield ServerSentEvent("only data")
        yield ServerSentEvent("a\nb", event="multi")

    async def handler() -> Response:
        return Response.sse(events())

    router = Router().get("/events", handler)
    async with TestClient(router) as client, client.stream("GET", "/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert raw.decode() == (
        "data: hello\n\n"
        "data: two\ndata: lines\n\n"
        "event: update\nid: 7\nretry: 1500\ndata: payload\n\n"
        "data: only data\n\n"
        "event: multi\ndata: a\ndata: b\n\n"
    )


async def test_sse_events_arrive_one_by_one(autojump_clock: trio.abc.Clock) -> None:
    release = trio.Event()

    async def events() -> AsyncIterator[str]:
        yield "first"
        await release.wait()
        yield "second"

    async def handler() -> Response:
        return Response.sse(events())

    router = Router().get("/events", handler)
    with trio.fail_after(30):
        async with TestClient(router) as client, client.stream("GET", "/events") as response:
            received = response.aiter_raw()
            assert await received.__anext__() == b"data: first\n\n"
            release.set()
            assert b"".join([c async for c in received]) == b"data: second\n\n"


# -- return conversions -----------------------------------------------------------------------


async def test_returning_str_is_text() -> None:
    async def handler() -> str:
        return "plain ✓"

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == "plain ✓"


async def test_returning_bytes_is_octet_stream() -> None:
    async def handler() -> bytes:
        return b"\x00\x01\x02"

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.content == b"\x00\x01\x02"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}),
        ([1, "two", {"three": 3}], [1, "two", {"three": 3}]),
        ([], []),
        (Point(1, 2), {"x": 1, "y": 2}),
        (User(5, "Eve", ["x"]), {"id": 5, "name": "Eve", "tags": ["x"]}),
    ],
)
async def test_returning_json_values(value: object, expected: object) -> None:
    async def handler() -> object:
        return value

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == expected


async def test_returning_none_is_200_with_empty_body() -> None:
    async def handler() -> None:
        return None

    response = await fetch(handler)
    assert response.status_code == 200
    assert response.content == b""
    assert "content-type" not in response.headers


@pytest.mark.parametrize("value", [42, 1.5, {1, 2}, object(), Point])
async def test_returning_an_unsupported_type_is_500(value: object) -> None:
    async def handler() -> object:
        return value

    router = Router().get("/", handler).get("/ok", handler_ok)
    async with TestClient(router) as client:
        response = await client.get("/")
        assert_error_body(response, 500)
        assert (await client.get("/ok")).text == "ok"


async def handler_ok() -> str:
    return "ok"


def test_sse_data_splits_on_every_line_break_so_fields_cannot_be_injected() -> None:
    encoded = ServerSentEvent("a\rb\r\nc\nd").encode()
    assert encoded == b"data: a\ndata: b\ndata: c\ndata: d\n\n"
    injected = ServerSentEvent("x\revent: evil").encode()
    assert b"\nevent: evil" not in injected.replace(b"data: event: evil", b"")
    assert injected == b"data: x\ndata: event: evil\n\n"


def test_a_value_that_failed_to_encode_encodes_once_fixed() -> None:
    """The JSON encoder is made once; a failed encoding leaves nothing behind in it (its
    circular-reference bookkeeping would otherwise take the value for a cycle)."""
    value: list[object] = [[1], object()]
    with pytest.raises(InternalServerError, match="not JSON-serializable"):
        Response.json(value)
    value[1] = 2
    assert Response.json(value).body == b"[[1],2]"
