"""The HTTP/2 adapter's limits, from the server's settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._protocol.http2 import HTTP2Limits

if TYPE_CHECKING:
    from ..config import ServerConfig

__all__ = ["limits_from"]


def limits_from(config: ServerConfig) -> HTTP2Limits:
    """The adapter's limits from the server's settings."""
    options, limits = config.http2_options, config.limits
    return HTTP2Limits(
        max_concurrent_streams=options.max_concurrent_streams,
        max_header_list_size=options.http2_max_header_list_size,
        max_header_count=limits.max_header_count,
        max_continuation_frames=options.http2_max_continuation_frames,
        flood_allowance=options.http2_flood_allowance,
        stream_window=options.http2_stream_window,
        connection_window=options.http2_connection_window,
        max_requests=limits.max_requests_per_connection,
        max_frames_per_step=options.http2_max_frames_per_step,
    )
