"""The ``Request`` a handler receives (docs/routing.md, Handlers and the request), seen from inside real handlers.

Each test registers a handler taking ``Request``, sends a request with the ``TestClient`` and
checks the fields and helpers: method, uri, version, headers, body (plain and chunked),
route and query parameters, client address, scheme, and per-request extensions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from trioframe import Extensions, Headers, Method, PayloadTooLarge, Request, Router, Uri
from trioframe._request import BodyReader
from trioframe.testing import TestClient

from .helpers import assert_error_body


class Seen:
    """Keeps the ``Request`` the handler was called with, for the test to inspect."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    async def handler(self, request: Request) -> str:
        self.requests.append(request)
        return "seen"

    @property
    def last(self) -> Request:
        assert self.requests, "the handler did not run"
        return self.requests[-1]


async def capture(
    pattern: str, url: str, method: str = "GET", *, client_kwargs: Any = None, **kwargs: Any
) -> tuple[Request, httpx.Response]:
    """Route ``pattern`` to a capturing handler, send one request to ``url``."""
    seen = Seen()
    router = Router().route(pattern, seen.handler, methods=[method])
    async with TestClient(router, **(client_kwargs or {})) as client:
        response = await client.request(method, url, **kwargs)
    assert response.status_code == 200, response.text
    return seen.last, response


# -- method, uri, version, scheme, client ------------------------------------------------------


async def test_method_is_a_method_equal_to_its_name() -> None:
    request, _ = await capture("/", "/")
    assert isinstance(request.method, Method)
    assert request.method == "GET"
    assert request.method == Method.GET
    request, _ = await capture("/", "/", "PATCH")
    assert request.method == "PATCH"
    assert request.method is Method.PATCH


async def test_uri_parts() -> None:
    request, _ = await capture("/files/{name}", "/files/a%20b%2Fc?x=1&y=caf%C3%A9")
    assert isinstance(request.uri, Uri)
    assert request.uri.raw_path == "/files/a%20b%2Fc"
    assert request.uri.path == "/files/a b/c"
    assert request.uri.query == "x=1&y=caf%C3%A9"
    assert str(request.uri) == "/files/a%20b%2Fc?x=1&y=caf%C3%A9"
    assert request.params == {"name": "a b/c"}


async def test_uri_without_query() -> None:
    request, _ = await capture("/plain", "/plain")
    assert request.uri.query == ""
    assert str(request.uri) == "/plain"


async def test_version_scheme_and_default_client_address() -> None:
    request, _ = await capture("/", "/")
    assert request.version == "1.1"
    assert request.scheme == "http"
    assert request.client == ("127.0.0.1", 50000)


async def test_client_address_is_configurable_on_the_test_client() -> None:
    request, _ = await capture("/", "/", client_kwargs={"client": ("10.1.2.3", 4242)})
    assert request.client == ("10.1.2.3", 4242)


# -- headers ----------------------------------------------------------------------------------


async def test_headers_lookups() -> None:
    request, _ = await capture(
        "/",
        "/",
        headers=[
            ("X-Token", "abc"),
            ("Accept-Language", "en"),
            ("X-Multi", "one"),
            ("x-multi", "two"),
        ],
    )
    headers = request.headers
    assert isinstance(headers, Headers)
    assert headers.get("x-token") == "abc"
    assert headers.get("X-TOKEN") == "abc"
    assert headers.get("X-Token") == "abc"
    assert headers.get("x-missing") is None
    assert headers.get("x-missing", "default") == "default"
    assert headers.get("x-multi") == "one"
    assert headers.get_all("X-Multi") == ["one", "two"]
    assert headers.get_all("x-missing") == []
    assert "x-token" in headers
    assert "X-TOKEN" in headers
    assert "x-missing" not in headers
    names = list(headers)
    assert "x-token" in names
    assert "accept-language" in names
    assert names.count("x-multi") == 1
    assert all(name == name.lower() for name in names)
    assert request.header("ACCEPT-LANGUAGE") == "en"
    assert request.header("x-multi") == "one"
    assert request.header("nope") is None


async def test_host_header_is_present() -> None:
    request, _ = await capture("/", "/")
    assert request.header("host") == "testserver"


# -- body -------------------------------------------------------------------------------------


async def test_post_body_is_read_before_the_handler() -> None:
    bodies: list[bytes] = []

    async def handler(request: Request) -> str:
        # no await before looking: the body must already be there
        bodies.append(request.body)
        return "ok"

    payload = bytes(range(256)) * 10
    async with TestClient(Router().post("/upload", handler)) as client:
        response = await client.post("/upload", content=payload)
    assert response.status_code == 200
    assert bodies == [payload]


async def test_get_without_body_has_empty_body() -> None:
    request, _ = await capture("/", "/")
    assert request.body == b""


async def test_chunked_request_body_is_assembled() -> None:
    parts = [b"alpha,", b"", b"beta,", b"gamma" * 1000]

    async def body() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    request, _ = await capture("/upload", "/upload", "POST", content=body())
    assert request.header("transfer-encoding") == "chunked"
    assert request.header("content-length") is None
    assert request.body == b"".join(parts)


async def test_read_body_shows_each_chunk_as_it_arrives() -> None:
    chunks = [b"one,", b"two,", b"three"]
    arrived = iter([*chunks, b""])

    async def reader() -> bytes:
        return next(arrived)

    request = Request(Method.POST, Uri("/"), body_reader=BodyReader(reader))
    seen: list[bytes] = []
    assert await request.read_body(seen.append) == b"one,two,three"
    assert seen == chunks
    again: list[bytes] = []
    assert await request.read_body(again.append) == b"one,two,three"
    assert again == [b"one,two,three"]  # read before: the whole body at once


async def test_a_body_that_has_all_arrived_is_taken_without_a_read() -> None:
    async def must_not_read() -> bytes:
        raise AssertionError("read: the body had all arrived")

    whole = BodyReader(must_not_read, take_whole=lambda: b"all of it")
    request = Request(Method.POST, Uri("/"), body_reader=whole)
    seen: list[bytes] = []
    assert await request.read_body(seen.append) == b"all of it"
    assert seen == [b"all of it"] and request.body_consumed
    assert whole.received == 9
    assert request.take_arrived_body()  # read before: it is there


async def test_a_body_still_arriving_is_not_taken() -> None:
    arrived = iter([b"ab", b""])

    async def reader() -> bytes:
        return next(arrived)

    request = Request(Method.POST, Uri("/"), body_reader=BodyReader(reader))
    assert not request.take_arrived_body()
    assert request.body == b"" and not request.body_consumed
    assert await request.read_body() == b"ab"


@pytest.mark.parametrize(("limit", "taken"), [(8, False), (9, True), (10, True)])
def test_the_body_limit_applies_to_a_body_taken_whole(limit: int, taken: bool) -> None:
    request = Request(
        Method.POST, Uri("/"), body_reader=BodyReader(limit=limit, take_whole=lambda: b"all of it")
    )
    if taken:
        assert request.take_arrived_body() and request.body == b"all of it"
    else:
        with pytest.raises(PayloadTooLarge):
            request.take_arrived_body()
        assert request.body_reader.exceeded and not request.body_consumed


async def test_what_on_chunk_raises_stops_the_read() -> None:
    arrived = iter([b"good", b"bad", b"never read", b""])

    async def reader() -> bytes:
        return next(arrived)

    def check(chunk: bytes) -> None:
        if chunk == b"bad":
            raise ValueError("bad chunk")

    request = Request(Method.POST, Uri("/"), body_reader=BodyReader(reader))
    with pytest.raises(ValueError, match="bad chunk"):
        await request.read_body(check)
    assert not request.body_consumed
    assert next(arrived) == b"never read"


async def test_keep_alive_requests_each_get_their_own_body() -> None:
    seen = Seen()
    async with TestClient(Router().post("/echo", seen.handler)) as client:
        await client.post("/echo", content=b"first")
        await client.post("/echo", content=b"second body")
    assert [r.body for r in seen.requests] == [b"first", b"second body"]


# -- params and query -------------------------------------------------------------------------


async def test_params_and_param() -> None:
    request, _ = await capture("/orgs/{org}/repos/{*path}", "/orgs/acme/repos/a/b%20c")
    assert request.params == {"org": "acme", "path": "a/b c"}
    assert request.param("org") == "acme"
    assert request.param("path") == "a/b c"
    assert request.param("missing") is None


async def test_query_params_last_wins_and_query_list() -> None:
    request, _ = await capture("/search", "/search?a=1&b=x+y&a=2&c=%26%3D&flag&a=3&e=")
    assert request.query_params == {"a": "3", "b": "x y", "c": "&=", "flag": "", "e": ""}
    assert request.query("a") == "3"
    assert request.query("b") == "x y"
    assert request.query("missing") is None
    assert request.query_list("a") == ["1", "2", "3"]
    assert request.query_list("b") == ["x y"]
    assert request.query_list("missing") == []


async def test_query_is_empty_without_a_query_string() -> None:
    request, _ = await capture("/search", "/search")
    assert request.query_params == {}
    assert request.query_list("a") == []


async def test_query_params_through_httpx_params() -> None:
    request, _ = await capture(
        "/s", "/s", params=[("q", "hello world"), ("tag", "a"), ("tag", "b"), ("u", "é&")]
    )
    assert request.query("q") == "hello world"
    assert request.query_list("tag") == ["a", "b"]
    assert request.query("u") == "é&"


@pytest.mark.parametrize("query", ["a=%zz", "a=%ff", "%zz=1", "a=%e9t%e9", "a=1&b=%4"])
async def test_invalid_percent_encoding_in_the_query_is_400(query: str) -> None:
    async def handler(request: Request) -> dict[str, str]:
        return request.query_params

    async with TestClient(Router().get("/q", handler)) as client:
        response = await client.get(f"/q?{query}")
    assert_error_body(response, 400)


async def test_query_field_limit_through_a_handler() -> None:
    async def handler(request: Request) -> dict[str, int]:
        return {"fields": len(request.query_params)}

    at_limit = "&".join(f"k{i}=v" for i in range(1000))
    async with TestClient(Router().get("/q", handler)) as client:
        ok = await client.get(f"/q?{at_limit}")
        too_many = await client.get(f"/q?{at_limit}&extra=1")
    assert ok.json() == {"fields": 1000}
    assert_error_body(too_many, 400)


async def test_invalid_query_is_not_an_error_when_the_handler_ignores_it() -> None:
    request, _ = await capture("/q", "/q?a=%zz")
    assert request.uri.query == "a=%zz"


# -- extensions -------------------------------------------------------------------------------


class UserId(int):
    pass


class Session:
    def __init__(self, name: str) -> None:
        self.name = name


async def test_extensions_insert_get_and_index() -> None:
    results: dict[str, Any] = {}

    async def handler(request: Request) -> str:
        extensions = request.extensions
        assert isinstance(extensions, Extensions)
        assert extensions.get(Session) is None
        session = Session("s1")
        extensions.insert(session)
        extensions.insert(UserId(7))
        results["session"] = extensions.get(Session) is session
        results["index"] = extensions[Session] is session
        results["user"] = extensions[UserId]
        extensions.insert(Session("s2"))  # replaces the previous Session
        results["replaced"] = extensions[Session].name
        try:
            extensions[float]
        except KeyError:
            results["missing"] = "KeyError"
        results["get_missing"] = extensions.get(float)
        return "ok"

    async with TestClient(Router().get("/", handler)) as client:
        assert (await client.get("/")).text == "ok"
    assert results == {
        "session": True,
        "index": True,
        "user": 7,
        "replaced": "s2",
        "missing": "KeyError",
        "get_missing": None,
    }


async def test_extensions_are_fresh_per_request() -> None:
    counts: list[int] = []

    async def handler(request: Request) -> str:
        counts.append(len(request.extensions))
        request.extensions.insert(Session("x"))
        return "ok"

    async with TestClient(Router().get("/", handler)) as client:
        await client.get("/")
        await client.get("/")
    assert counts == [0, 0]


def test_extensions_missing_key_raises_key_error() -> None:
    extensions = Extensions()
    with pytest.raises(KeyError):
        extensions[Session]
    extensions.insert(Session("a"))
    assert extensions[Session].name == "a"
    assert Session in extensions
    assert UserId not in extensions
