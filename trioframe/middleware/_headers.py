"""Byte-level header helpers shared by the built-in middleware.

They work on the raw ``(name, value)`` pairs (names lower-case) so the per-request path does no
decoding, case folding of names or validation of values the middleware built itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._request import Request
    from .._response import Response

__all__ = ["add_vary", "request_header", "response_header", "set_header"]


def request_header(request: Request, name: bytes) -> bytes | None:
    """The first raw value of request header ``name`` (lower-case bytes), or ``None``."""
    for key, value in request.headers.raw:
        if key == name:
            return value
    return None


def response_header(response: Response, name: bytes) -> bytes | None:
    """The first raw value of response header ``name`` (lower-case bytes), or ``None``."""
    for key, value in response.headers:
        if key == name:
            return value
    return None


def set_header(response: Response, name: bytes, value: bytes) -> None:
    """Set ``name`` to ``value``, dropping earlier values of that name."""
    headers = response.headers
    for key, _ in headers:
        if key == name:
            response.headers = headers = [(k, v) for k, v in headers if k != name]
            break
    headers.append((name, value))


def add_vary(response: Response, token: bytes) -> None:
    """Add ``token`` to ``Vary`` unless a ``Vary`` value already names it (or is ``*``).

    Existing ``Vary`` headers are kept: the token goes into a header line of its own, which
    HTTP treats as the same comma-separated list."""
    wanted = token.lower()
    for key, value in response.headers:
        if key == b"vary":
            for item in value.split(b","):
                folded = item.strip().lower()
                if folded == wanted or folded == b"*":
                    return
    response.headers.append((b"vary", token))
