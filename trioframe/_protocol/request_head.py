"""``RequestHead``: a parsed request head, the same value whichever protocol carried it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["RequestHead"]


class RequestHead(NamedTuple):
    """A parsed request head. ``headers`` are ``(name, value)`` byte pairs, names lower-case;
    ``target`` is the request target (``/path?query`` or absolute-form); ``version`` is
    ``"1.0"``, ``"1.1"`` or ``"2"``. ``content_length`` is the declared body length (``None``:
    not declared). ``chunked`` and ``expects_continue`` are HTTP/1.1 framing facts (a chunked
    body; ``Expect: 100-continue``), false on other protocols. ``protocol`` is the ``:protocol``
    of an HTTP/2 extended CONNECT (RFC 8441: ``"websocket"``), ``None`` otherwise. ``bodyless``
    is true when the head alone says there is no body (HTTP/1.1: no Content-Length or ``0``,
    not chunked); false means there may be one.

    Immutable; a named tuple rather than an attrs class because one is made per request and
    a tuple is the cheapest immutable value to make."""

    method: bytes
    target: bytes
    version: str
    headers: Sequence[tuple[bytes, bytes]]
    content_length: int | None
    chunked: bool = False
    expects_continue: bool = False
    protocol: str | None = None
    bodyless: bool = False
