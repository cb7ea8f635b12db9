"""No parser of ours holds the event loop: hostile input as large as the default limits let
through, sent through the real server code in memory, never makes one task step run longer
than the guard's budget (``tests/blocking.py``), and every decoding failure is a 400 with
the standard error body.

Bodies go out in 64 KiB pieces under their Content-Length, as a socket would deliver them,
so that the client side of the in-memory connection does not hold the loop either. HTTP/2
reads of every frame kind, 64 KiB each, are under the same guard in
``tests/http2/test_read_bounds.py``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import trio

from trioframe import (
    Form,
    Headers,
    Json,
    Multipart,
    MultipartConfig,
    Query,
    Request,
    Response,
    Router,
    ServerConfig,
)
from trioframe.testing import TestClient, TestHttpClient

from .app.helpers import assert_error_body
from .blocking import loop_guard

DEFAULTS = ServerConfig()
BODY = DEFAULTS.max_body_size  # 10 MiB
#: Room for the method, the path and " HTTP/1.1" on the longest request line allowed.
TARGET = DEFAULTS.max_request_line_size - 32
#: Room for the request line and the other headers in the largest head allowed.
HEADER = DEFAULTS.max_header_size - 512
PIECE = 64 * 1024


def fill(unit: bytes, size: int) -> bytes:
    """``unit`` repeated to exactly ``size`` bytes (the last copy may be cut)."""
    return (unit * (size // len(unit) + 1))[:size]


def whole(unit: bytes, size: int) -> bytes:
    """As many whole copies of ``unit`` as fit in ``size`` bytes."""
    return unit * (size // len(unit))


async def _pieces(body: bytes) -> AsyncIterator[bytes]:
    """``body`` in 64 KiB pieces."""
    for start in range(0, len(body), PIECE):
        yield body[start : start + PIECE]


async def send(
    client: TestHttpClient,
    method: str,
    target: bytes,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """Send ``target`` exactly as given (no re-encoding) with ``body`` in pieces."""
    request = client.build_request(
        method,
        "/",
        content=_pieces(body) if body else None,
        headers={"content-length": str(len(body)), **(headers or {})},
    )
    request.url = request.url.copy_with(raw_path=target)
    return await client.send(request)


def check_status(response: httpx.Response, status: int) -> None:
    """``response`` has ``status``; an error has the standard error body."""
    if status >= 400:
        assert_error_body(response, status)
    else:
        assert response.status_code == status, response.text


# -- the guard itself ---------------------------------------------------------------------
class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_guard_fails_a_step_over_budget_and_names_its_task() -> None:
    clock = FakeClock()

    async def slow_parser() -> None:
        clock.now += 0.25  # this step "runs" 250 ms

    with pytest.raises(pytest.fail.Exception) as info, loop_guard(budget=0.1, clock=clock):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_parser, name="slow-parser")
    assert "slow-parser" in str(info.value)
    assert "250.0 ms" in str(info.value)


async def test_the_guard_passes_steps_within_budget() -> None:
    clock = FakeClock()
    with loop_guard(budget=0.1, clock=clock) as guard:

        async def quick() -> None:
            clock.now += 0.1  # at the budget: allowed

        async with trio.open_nursery() as nursery:
            nursery.start_soon(quick, name="quick")
    assert guard.worst.task == "quick"
    assert guard.worst.seconds == pytest.approx(0.1)


async def test_the_default_clock_counts_work_on_the_loop() -> None:
    # The guard times steps in the thread's CPU time: real work in a step is what it sees.
    async def busy() -> None:
        until = time.thread_time() + 0.03
        while time.thread_time() < until:
            pass

    with pytest.raises(pytest.fail.Exception) as info, loop_guard(budget=0.01):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(busy, name="busy")
    assert "busy" in str(info.value)


# -- the app under attack -------------------------------------------------------------------
async def json_any(value: Json[Any]) -> Response:
    return Response.json({"type": type(value).__name__})


async def query_dict(value: Query[dict[str, str]]) -> Response:
    return Response.json({"fields": len(value)})


async def query_params(request: Request) -> Response:
    return Response.json({"fields": len(request.query_params)})


async def cookies(request: Request) -> Response:
    return Response.json({"cookies": len(request.cookies())})


async def form_dict(value: Form[dict[str, str]]) -> Response:
    return Response.json({"fields": len(value), "size": sum(map(len, value.values()))})


async def multipart(form: Multipart) -> Response:
    names = [(field.name, len(await field.text())) async for field in form]
    return Response.json(names)


async def headers(all_headers: Headers) -> Response:
    return Response.json({"missing": all_headers.get("x-not-sent"), "count": len(all_headers)})


async def matched(request: Request) -> Response:
    return Response.json(request.params)


def hostile_app() -> Router:
    """One route per parser, and routes with parameters and wildcards for the trie."""
    router = (
        Router()
        .post("/json", json_any)
        .get("/query", query_dict)
        .get("/params", query_params)
        .get("/cookies", cookies)
        .post("/form", form_dict)
        .post("/multipart", multipart)
        .get("/headers", headers)
    )
    for pattern in [
        "/p/{a}/{b}/{c}/x",
        "/p/{a}/{b}/y",
        "/p/{a}/z",
        "/p/{a}/{b}/{c}/{d}/{*rest}",
        "/w/{*rest}",
        "/{a}/{b}/{c}/{d}/e",
        "/a/a/a/{x}",
        "/a/{x}/a/b",
    ]:
        router.get(pattern, matched)
    return router


# -- JSON -----------------------------------------------------------------------------------
JSON = {"content-type": "application/json"}


JSON_MAX = DEFAULTS.max_json_size  # 256 KiB: the largest body Json[T] parses


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(fill(b"[", JSON_MAX), id="256 KiB of ["),
        pytest.param(fill(b"]", JSON_MAX), id="256 KiB of ]"),
        pytest.param(fill(b'"', JSON_MAX), id="256 KiB of quotes"),
        pytest.param(fill(b"\\", JSON_MAX), id="256 KiB of backslashes"),
        pytest.param(b'"' + fill(b'\\"', 48 * 1024), id="48 KiB of escaped quotes, unterminated"),
        pytest.param(b'"' + fill(b'\\"', JSON_MAX - 1), id="256 KiB of escaped quotes"),
        pytest.param(fill(b'"[', JSON_MAX), id='256 KiB of "['),
        pytest.param(fill(b"]", JSON_MAX // 2) + fill(b"[", JSON_MAX // 2), id="256 KiB ]]][[["),
        pytest.param(fill(b'{"a":[', JSON_MAX), id='256 KiB of {"a":['),
        pytest.param(b"[" * 101 + b"]" * 101, id="101 levels"),
        pytest.param(b'{"a":' * 101 + b"1" + b"}" * 101, id="101 levels of objects"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="100000 levels"),
    ],
)
async def test_hostile_json_is_400_without_stalling(body: bytes) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "POST", b"/json", body, JSON)
    assert_error_body(response, 400)


def _valid_list(unit: bytes, size: int) -> bytes:
    """A JSON array of ``unit`` items, as close to ``size`` bytes as whole items allow."""
    return b"[" + b",".join([unit] * ((size - 2) // (len(unit) + 1))) + b"]"


@pytest.mark.parametrize(
    "unit", [b"[]", b"[[]]", b"0", b"{}", b'{"a":[]}', b'""', b"1.5e300"], ids=bytes.decode
)
async def test_the_slowest_valid_json_of_the_largest_size_stays_in_budget(unit: bytes) -> None:
    # The stdlib parser holds the loop for the whole parse: max_json_size is what bounds it.
    body = _valid_list(unit, JSON_MAX)
    assert JSON_MAX - len(body) <= len(unit) + 2
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "POST", b"/json", body, JSON)
    assert response.status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(fill(b"[", BODY), id="10 MiB of ["),
        pytest.param(_valid_list(b"[]", BODY), id="10 MiB of valid [[],...]"),
    ],
)
async def test_json_over_max_json_size_is_413_without_parsing(body: bytes) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "POST", b"/json", body, JSON)
    assert_error_body(response, 413)


# -- query strings --------------------------------------------------------------------------
def _fields(count: int) -> bytes:
    """``count`` query fields."""
    return b"&".join(b"k%d=v" % i for i in range(count))


@pytest.mark.parametrize(
    ("query", "status", "fields"),
    [
        pytest.param(_fields(1000), 200, 1000, id="1000 fields"),
        pytest.param(_fields(1001), 400, None, id="1001 fields"),
        pytest.param(fill(b"a&", TARGET - 8), 400, None, id="a&a&a... to the longest line"),
        pytest.param(b"v=" + whole(b"%41", TARGET - 10), 200, 1, id="one value of %41"),
        pytest.param(b"v=" + whole(b"%C3%A9", TARGET - 10), 200, 1, id="one value of %C3%A9"),
        pytest.param(b"a=1" + fill(b"&", TARGET - 11), 200, 1, id="&&&"),
        pytest.param(b"v=" + fill(b"+", TARGET - 10), 200, 1, id="+++"),
        pytest.param(fill(b"=", TARGET - 8), 200, 1, id="==="),
        pytest.param(fill(b"%", TARGET - 8), 400, None, id="%%%"),
        pytest.param(b"v=" + whole(b"%41", TARGET - 12) + b"%4", 400, None, id="%4 at the end"),
    ],
)
@pytest.mark.parametrize("path", [b"/query", b"/params"])
async def test_hostile_query_strings(
    query: bytes, status: int, fields: int | None, path: bytes
) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "GET", path + b"?" + query)
    check_status(response, status)
    if fields is not None:
        assert response.json() == {"fields": fields}


# -- cookies --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cookie", "count"),
    [
        pytest.param(fill(b"a=1; ", HEADER), 1, id="one name again and again"),
        pytest.param(b"; ".join(b"c%d=1" % i for i in range(1700)), 1700, id="1700 names"),
        pytest.param(fill(b";", HEADER), 0, id=";;;"),
        pytest.param(fill(b'"', HEADER), 0, id='"""'),
        pytest.param(fill(b'a="b; ', HEADER), 1, id='a="b; a="b; ...'),
        pytest.param(fill(b"=", HEADER), 0, id="==="),
    ],
)
async def test_hostile_cookie_headers(cookie: bytes, count: int) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "GET", b"/cookies", headers={"cookie": cookie.decode()})
    assert response.json() == {"cookies": count}


# -- forms ----------------------------------------------------------------------------------
FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize(
    ("body", "status", "fields", "size"),
    [
        pytest.param(
            b"v=" + whole(b"%41", BODY - 2), 200, 1, (BODY - 2) // 3, id="one value of %41"
        ),
        pytest.param(b"v=" + whole(b"%C3%A9", BODY - 2), 200, 1, (BODY - 2) // 6, id="%C3%A9"),
        pytest.param(b"v=" + whole(b"a%41=", BODY - 2), 200, 1, (BODY - 2) // 5 * 3, id="a%41="),
        pytest.param(
            b"&".join(b"k%03d=" % i + whole(b"%41", BODY // 1000 - 6) for i in range(1000)),
            200,
            1000,
            1000 * ((BODY // 1000 - 6) // 3),
            id="1000 fields of %41",
        ),
        pytest.param(fill(b"a&", BODY), 400, None, None, id="a&a&a..."),
        pytest.param(b"a=1" + fill(b"&", BODY - 3), 200, 1, 1, id="&&&"),
        pytest.param(
            (b"k" + b"&" * (BODY // 1000 - 1)) * 1000 + b"x",
            400,
            None,
            None,
            id="1001 fields in &&&",
        ),
        pytest.param(b"v=" + fill(b"+", BODY - 2), 200, 1, BODY - 2, id="+++"),
        pytest.param(fill(b"=", BODY), 200, 1, BODY - 1, id="==="),
        pytest.param(fill(b"%", BODY), 400, None, None, id="%%%"),
        pytest.param(b"v=" + whole(b"%41", BODY - 5) + b"%4", 400, None, None, id="%4 at the end"),
        pytest.param(
            b"v=" + fill(b"a", BODY - 3) + b"\xff", 400, None, None, id="not UTF-8 at the end"
        ),
    ],
)
async def test_hostile_form_bodies(
    body: bytes, status: int, fields: int | None, size: int | None
) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "POST", b"/form", body, FORM)
    check_status(response, status)
    if status == 200:
        assert response.json() == {"fields": fields, "size": size}


# -- multipart part headers -------------------------------------------------------------------
PART_HEADER = MultipartConfig().max_part_header_size - 200
MULTIPART = {"content-type": "multipart/form-data; boundary=BOUNDARY"}


def one_part(*headers: bytes, content: bytes = b"value") -> bytes:
    """A multipart body of one part with these header lines."""
    lines = b"".join(header + b"\r\n" for header in headers)
    return b"--BOUNDARY\r\n" + lines + b"\r\n" + content + b"\r\n--BOUNDARY--\r\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            one_part(
                b"Content-Disposition: form-data; name=\"f\"; filename*=utf-8''"
                + whole(b"%41", PART_HEADER - 80)
            ),
            [["f", 5]],
            id="RFC 2231 file name of escapes",
        ),
        pytest.param(
            one_part(
                b'Content-Disposition: form-data; name="' + fill(b'\\"', PART_HEADER - 60) + b'"'
            ),
            [['"' * ((PART_HEADER - 60) // 2), 5]],
            id="escaped quotes in the name",
        ),
        pytest.param(
            one_part(
                b'Content-Disposition: form-data; name="f"',
                b"Content-Type: text/plain; charset=utf-8",
                content=whole("é".encode(), MultipartConfig().max_field_size),
            ),
            [["f", MultipartConfig().max_field_size // 2]],
            id="text() of the largest field",
        ),
    ],
)
async def test_hostile_multipart_part_headers(body: bytes, expected: list[list[Any]]) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "POST", b"/multipart", body, MULTIPART)
    check_status(response, 200)
    assert response.json() == expected


# -- routing --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "status"),
    [
        pytest.param(b"/" + fill(b"a/", TARGET - 1), 404, id="/a/a/a..."),
        pytest.param(fill(b"/", TARGET), 404, id="////"),
        pytest.param(b"/p" + fill(b"/x", TARGET - 2), 200, id="/p/x/x... into a wildcard"),
        pytest.param(whole(b"/%41", TARGET), 404, id="/%41/%41..."),
        pytest.param(b"/w" + whole(b"/%41", TARGET - 2), 200, id="/w/%41/... wildcard"),
        pytest.param(b"/a/a/a" + fill(b"/", TARGET - 6), 404, id="/a/a/a////"),
        pytest.param(b"/" + whole(b"%zz/", TARGET - 1), 400, id="/%zz/%zz..."),
    ],
)
async def test_hostile_paths(path: bytes, status: int) -> None:
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "GET", path)
    check_status(response, status)


async def test_route_search_backtracks_in_time_linear_in_the_trie() -> None:
    # Each route below shares its first k segments with the literal route and has
    # parameters after: at every depth the search tries the literal child, then the
    # parameter child. It visits each trie node at most once (a node's depth is fixed), so
    # a path that matches none of them costs the size of the trie, not 2 ** depth.
    depth = 40
    router = Router()
    for k in range(depth):
        router.get(
            "/" + "/".join(["a"] * k + [f"{{p{i}}}" for i in range(depth - k)]) + "/end", matched
        )
    path = b"/" + b"/".join([b"a"] * depth) + b"/nope"
    async with TestClient(router) as client:
        with loop_guard():
            response = await send(client, "GET", path)
    check_status(response, 404)


# -- headers --------------------------------------------------------------------------------
async def test_the_most_headers_and_a_missing_one() -> None:
    sent = {f"x-header-{i}": "v" * 100 for i in range(DEFAULTS.max_header_count - 6)}
    async with TestClient(hostile_app()) as client:
        with loop_guard():
            response = await send(client, "GET", b"/headers", headers=sent)
    assert response.json()["missing"] is None
