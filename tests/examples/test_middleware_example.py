"""``examples/middleware.py``: timing, bearer auth into an extension, logging, CORS."""

from __future__ import annotations

import logging
import pathlib
import runpy

import pytest

from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "middleware.py"


@pytest.fixture
def router():  # type: ignore[no-untyped-def]
    return runpy.run_path(str(EXAMPLE))["router"]


async def test_timing_header_on_every_response(router) -> None:  # type: ignore[no-untyped-def]
    async with TestClient(router) as client:
        for path in ("/public", "/api/me", "/nowhere"):
            response = await client.get(path)
            assert response.headers["x-response-time"].endswith("ms")


async def test_bearer_auth_hands_the_user_to_the_handler(router) -> None:  # type: ignore[no-untyped-def]
    async with TestClient(router) as client:
        refused = await client.get("/api/me")
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        wrong = await client.get("/api/me", headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = await client.get("/api/me", headers={"authorization": "Bearer secret-token"})
        assert ok.json() == {"name": "ada"}
        assert (await client.get("/public")).text == "anyone can see this"


async def test_cors_on_responses_and_preflight(router) -> None:  # type: ignore[no-untyped-def]
    origin = {"origin": "https://app.example"}
    async with TestClient(router) as client:
        response = await client.get("/public", headers=origin)
        assert response.headers["access-control-allow-origin"] == "*"
        refused = await client.get("/api/me", headers=origin)
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == "*"
        preflight = await client.options(
            "/api/me", headers={**origin, "access-control-request-method": "DELETE"}
        )
        assert preflight.status_code == 204
        assert "DELETE" in preflight.headers["access-control-allow-methods"]
        patch = await client.options(
            "/api/me", headers={**origin, "access-control-request-method": "PATCH"}
        )
        assert patch.status_code == 403


async def test_each_request_is_logged(router, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger="trioframe.access")
    async with TestClient(router) as client:
        await client.get("/public")
        await client.get("/api/me")
    lines = [r.getMessage() for r in caplog.records if r.name == "trioframe.access"]
    assert len(lines) == 2
    assert "GET" in lines[0] and "/public" in lines[0] and "200" in lines[0]
    assert "/api/me" in lines[1] and "401" in lines[1]
