"""``HTTP2Options``: what one HTTP/2 connection allows (streams, header blocks, flow-control
windows, output and the frame-flood budgets). They apply once ``Protocols.http2`` is on.

Sizes are bytes. docs/http2.md explains the flood budget and the read step.
"""

from __future__ import annotations

import attrs

from .checks import KiB, MiB, positive, window_size

__all__ = ["HTTP2Options"]


@attrs.frozen(kw_only=True)
class HTTP2Options:
    """Per-connection HTTP/2 limits."""

    #: Streams in progress per connection (default 100; a reset stream counts until its
    #: handler has returned); more are refused with RST_STREAM(REFUSED_STREAM).
    max_concurrent_streams: int = attrs.field(default=100, validator=positive)
    #: Largest request header list (default 32 KiB; name + value + 32 bytes per field, as
    #: RFC 9113 counts it) → 431 on the stream; past twice this the connection ends (an
    #: HPACK bomb).
    http2_max_header_list_size: int = attrs.field(default=32 * KiB, validator=positive)
    #: Most CONTINUATION frames one header block may use (default 16, at most 63); more
    #: ends the connection with GOAWAY(ENHANCE_YOUR_CALM).
    http2_max_continuation_frames: int = attrs.field(
        default=16, validator=attrs.validators.and_(positive, attrs.validators.le(63))
    )
    #: Frames (and server-side resets) that do no work a connection may cost beyond twice
    #: the work it gets done (default 1000), before GOAWAY(ENHANCE_YOUR_CALM).
    http2_flood_allowance: int = attrs.field(default=1000, validator=positive)
    #: Request body bytes one stream may have buffered ahead of its handler (default
    #: 64 KiB): the stream flow-control window, reopened as the handler reads. At least 65535.
    http2_stream_window: int = attrs.field(
        default=64 * KiB, validator=attrs.validators.and_(window_size, positive)
    )
    #: Request body bytes all the streams of a connection may have buffered ahead of their
    #: handlers (default 1 MiB): the connection flow-control window. At least 65535.
    http2_connection_window: int = attrs.field(
        default=1 * MiB, validator=attrs.validators.and_(window_size, positive)
    )
    #: Response bytes queued for one connection (default 64 KiB) past which senders wait
    #: and the server stops reading from the client (until the client reads).
    http2_max_output_buffer: int = attrs.field(default=64 * KiB, validator=positive)
    #: Most frames of one read handled in one go (default 64); the rest of the read waits
    #: until other connections have run (and the streams it opened past
    #: ``max_concurrent_streams`` are refused), so that a read of thousands of small frames
    #: cannot hold the event loop.
    http2_max_frames_per_step: int = attrs.field(default=64, validator=positive)
