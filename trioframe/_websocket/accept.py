"""Accepting an upgrade on the application side: the checks a WebSocket route makes before
its handler may run, and ``accept``: the 101 response whose body is an ``Upgrade`` (the
handler bound), which tells the server to switch.

Sans-I/O and free of wsproto: the dispatch layer calls :func:`check_upgrade` inside the
middleware chain, so a refused upgrade (400, 403, 426) is an ordinary error response that
middleware sees and logs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from .._body import Upgrade
from .._errors import Error
from .._protocol.errors import ProtocolError
from .._protocol.websocket import Handshake, accept_headers, choose_subprotocol, read_handshake
from .._response import Response

if TYPE_CHECKING:
    from .._request import Request
    from .connection import WebSocketConnection

__all__ = ["WebSocketPolicy", "accept", "check_upgrade", "upgrade_required"]


@attrs.frozen
class WebSocketPolicy:
    """The server settings the application side needs to accept an upgrade (a slice of
    ``ServerConfig``)."""

    allowed_origins: tuple[str, ...] | None = None
    compression: bool = False
    max_message_size: int = 1024 * 1024


def upgrade_required() -> Error:
    """The 426 for a plain request on a WebSocket route."""
    return Error(
        426,
        "this route speaks WebSocket: send an upgrade request",
        headers={"upgrade": "websocket", "connection": "Upgrade"},
    )


def _origin_allowed(origin: str | None, allowed: tuple[str, ...] | None) -> bool:
    if allowed is None or origin is None:  # no list, or not a browser (browsers always send it)
        return True
    origin = origin.strip().lower()
    return any(entry == "*" or entry.lower().rstrip("/") == origin for entry in allowed)


def check_upgrade(
    request: Request, allowed_origins: tuple[str, ...] | None, subprotocols: tuple[str, ...] = ()
) -> Handshake:
    """Validate an upgrade request for a WebSocket route: HTTP/1.1 with no body and a valid
    key, or an HTTP/2 extended CONNECT (RFC 8441); version 13 (400 / 426), an ``Origin`` in ``allowed_origins`` when that list is set (403), and
    a subprotocol in common when the route speaks ``subprotocols`` and the client offers some
    (400 naming the route's: a browser fails a connection whose 101 picks none of its offer).
    A request without ``Origin`` passes the origin check: only browsers send it, and it is
    browsers the check protects against (cross-site WebSocket hijacking). A client that offers
    no subprotocol, or a route that speaks none, passes the subprotocol check (the handler
    then sees ``subprotocol`` ``None``)."""
    extended_connect = request.version == "2"
    if not extended_connect and request.version != "1.1":
        raise Error.bad_request("a WebSocket upgrade needs HTTP/1.1 or HTTP/2")
    if request.content_length or "transfer-encoding" in request.headers:
        raise Error.bad_request("a WebSocket upgrade request has no body")
    try:
        handshake = read_handshake(request.headers.raw, extended_connect=extended_connect)
    except ProtocolError as exc:
        headers = {"sec-websocket-version": "13"} if exc.status == 426 else None
        raise Error(exc.status, exc.message, headers=headers) from None
    if not _origin_allowed(handshake.origin, allowed_origins):
        raise Error(403, f"WebSocket connections from origin {handshake.origin} are not allowed")
    offered = handshake.subprotocols
    if subprotocols and offered and choose_subprotocol(offered, subprotocols) is None:
        raise Error.bad_request(
            "none of the offered WebSocket subprotocols is supported; this route speaks "
            + ", ".join(subprotocols)
        )
    return handshake


def accept(
    handshake: Handshake,
    route_subprotocols: tuple[str, ...],
    run: Callable[[WebSocketConnection], Awaitable[Any]],
    extensions: list[Any],
    extension_header: str | None,
) -> Response:
    """The 101 response for a validated handshake: its body is an ``Upgrade`` holding
    ``run``. Middleware may add headers (they go out with the 101); a middleware that
    replaces it with another response rejects the upgrade."""
    subprotocol = choose_subprotocol(handshake.subprotocols, route_subprotocols)
    headers = accept_headers(handshake, subprotocol)
    if extension_header is not None:
        headers.append((b"sec-websocket-extensions", extension_header.encode("ascii")))
    response = Response(101, b"", headers)
    response.body_stream = Upgrade(run, subprotocol, extensions)
    return response
