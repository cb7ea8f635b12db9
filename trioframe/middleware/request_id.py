"""``RequestIdMiddleware``: one id per request, on the response and in ``request.extensions``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ._headers import request_header

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._response import Response

__all__ = ["RequestId", "RequestIdMiddleware"]

_HEADER = b"x-request-id"
_ALLOWED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
MIN_LENGTH = 8
MAX_LENGTH = 200


class RequestId(str):
    """The current request's id (a ``str``). Handlers take it as ``Extension[RequestId]``
    once :class:`RequestIdMiddleware` has run."""

    __slots__ = ()


def new_request_id() -> str:
    """A fresh random (version 4) UUID as 32 lower-case hex digits, like ``uuid4().hex``
    without building a ``UUID`` object."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def is_valid_request_id(value: bytes) -> bool:
    """``True`` for 8 to 200 characters, each ``A-Z``, ``a-z``, ``0-9``, ``_`` or ``-``."""
    return MIN_LENGTH <= len(value) <= MAX_LENGTH and not value.translate(None, _ALLOWED)


class RequestIdMiddleware:
    """Give every request an id.

    An incoming ``x-request-id`` is reused when it is 8 to 200 characters of
    ``[A-Za-z0-9_-]``; any other value (or none) is replaced by a fresh random UUID in hex (as ``uuid4().hex``). The id
    is inserted into ``request.extensions`` as a :class:`RequestId` before the rest of the
    chain runs, and set as the response's ``x-request-id`` header (replacing one a handler
    set). Error responses made by the framework get it too.

    Cancellation: nothing to clean up; a cancelled request simply has no response to tag.
    """

    __slots__ = ()

    async def __call__(self, request: Request, next: Next) -> Response:
        incoming = request_header(request, _HEADER)
        if incoming is not None and is_valid_request_id(incoming):
            raw = incoming
            request_id = RequestId(incoming.decode("ascii"))
        else:
            request_id = RequestId(new_request_id())
            raw = request_id.encode("ascii")
        request.extensions.insert(request_id)
        response = await next(request)
        headers = response.headers
        for key, _ in headers:
            if key == _HEADER:
                response.headers = headers = [(k, v) for k, v in headers if k != _HEADER]
                break
        headers.append((_HEADER, raw))
        return response
