"""Shared assertions for the application tests."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import httpx


def assert_error_body(
    response: httpx.Response, status: int, message: str | None = None
) -> dict[str, Any]:
    """Check that ``response`` carries the standard JSON error body for ``status``.

    The body must be ``{"status", "error", "message"}`` (``errors`` allowed, other keys
    tolerated), with ``error`` the standard reason phrase. Returns the decoded body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body, dict)
    assert body["status"] == status
    assert body["error"] == HTTPStatus(status).phrase
    assert isinstance(body["message"], str)
    if message is not None:
        assert body["message"] == message
    return body
