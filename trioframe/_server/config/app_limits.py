"""``AppLimits``: the limits the application enforces rather than the server.

The server hands them to the app once, when it freezes the router (``Server._prepare``); the
app makes each route's body limit from them (a route that streams multipart uses its own
``max_total_size`` instead).
"""

from __future__ import annotations

import attrs

from .checks import KiB, MiB, optional_strings, positive

__all__ = ["AppLimits"]


@attrs.frozen(kw_only=True)
class AppLimits:
    """Body and WebSocket limits the application applies. Sizes are bytes."""

    #: Largest request body (default 10 MiB); a larger one gets 413, from Content-Length
    #: before any of it is read, or from the running total of a chunked body.
    max_body_size: int = attrs.field(default=10 * MiB, validator=positive)
    #: Largest body ``Json[T]`` parses (default 256 KiB) → 413. The stdlib parser holds the
    #: event loop for the whole parse (up to about 50 ms for the worst 256 KiB body on a small
    #: machine), so this bounds how long one request can stall every other.
    max_json_size: int = attrs.field(default=256 * KiB, validator=positive)
    #: Largest WebSocket message (default 1 MiB), all its fragments together, after
    #: inflation → close 1009. Also caps permessage-deflate's inflation.
    websocket_max_message_size: int = attrs.field(default=1 * MiB, validator=positive)
    #: Origins allowed to open a WebSocket (default ``None``: any; ``"*"`` in the list: any;
    #: a request without ``Origin`` is allowed) → 403 on the upgrade.
    websocket_allowed_origins: tuple[str, ...] | None = attrs.field(
        default=None, converter=optional_strings
    )
    #: Accept permessage-deflate offers (default False); inflation is capped by
    #: ``websocket_max_message_size``.
    websocket_compression: bool = False
