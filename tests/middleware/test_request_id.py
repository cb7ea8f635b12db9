"""RequestIdMiddleware: reuse a valid incoming id, else generate one; header and extension."""

from __future__ import annotations

import pytest

from trioframe import Error, Extension, Response, Router
from trioframe.middleware import RequestId, RequestIdMiddleware
from trioframe.testing import TestClient


async def echo_id(request_id: Extension[RequestId]) -> Response:
    assert isinstance(request_id, RequestId) and isinstance(request_id, str)
    return Response.text(request_id)


def router() -> Router:
    return Router().middleware(RequestIdMiddleware()).get("/", echo_id)


def is_generated(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


@pytest.mark.parametrize(
    ("incoming", "kept"),
    [
        ("a" * 7, False),
        ("a" * 8, True),
        ("Az09_-xY" * 25, True),  # 200 characters
        ("a" * 201, False),
        ("abcdefg!", False),
        ("abc defgh", False),
        ("abcdefgh.", False),
        ("abcdéfgh", False),
        ("", False),
    ],
)
async def test_incoming_id_is_reused_only_when_valid(incoming: str, kept: bool) -> None:
    async with TestClient(router()) as client:
        response = await client.get("/", headers={b"x-request-id": incoming.encode("latin-1")})
    sent = response.headers["x-request-id"]
    assert response.text == sent  # the handler saw the same id the client gets
    if kept:
        assert sent == incoming
    else:
        assert sent != incoming and is_generated(sent)


async def test_a_fresh_id_per_request_without_one() -> None:
    async with TestClient(router()) as client:
        first = (await client.get("/")).headers["x-request-id"]
        second = (await client.get("/")).headers["x-request-id"]
    assert is_generated(first) and is_generated(second) and first != second


async def test_id_replaces_a_handler_header_and_tags_error_responses() -> None:
    async def sets_own() -> Response:
        return Response.text("x").with_header("X-Request-Id", "from-the-handler")

    async def fails() -> Response:
        raise Error.conflict("no")

    app = Router().middleware(RequestIdMiddleware()).get("/own", sets_own).get("/fail", fails)
    async with TestClient(app) as client:
        own = await client.get("/own", headers={"x-request-id": "client-id-1"})
        assert own.headers.get_list("x-request-id") == ["client-id-1"]
        for path, status in (("/fail", 409), ("/missing", 404)):
            response = await client.get(path, headers={"x-request-id": "client-id-2"})
            assert response.status_code == status
            assert response.headers["x-request-id"] == "client-id-2"


async def test_without_the_middleware_the_extension_is_missing() -> None:
    async with TestClient(Router().get("/", echo_id)) as client:
        assert (await client.get("/")).status_code == 500
