"""The events ``HTTP2Adapter.receive`` turns a client's frames into: what the server's
connection acts on, one stream at a time. Nothing here imports trio or h2."""

from __future__ import annotations

import attrs

from .request_head import RequestHead

__all__ = [
    "BodyEnded",
    "BodyReceived",
    "Event",
    "PeerClosed",
    "PingAcked",
    "RequestRefused",
    "RequestStarted",
    "StreamReset",
    "WindowOpened",
]


@attrs.define
class RequestStarted:
    """A request head arrived on a new stream; ``ended``: no body follows. ``body``: the
    whole body, when it came in one DATA frame right after the head, as ``BodyReceived``'s
    ``data`` and ``flow_length`` (``ended`` is then true, and no ``BodyReceived`` or
    ``BodyEnded`` follows for the stream). Not frozen, unlike the other events: the adapter
    adds that body to the event it made for the head (and a frozen class's ``__init__``
    sets each field through ``object.__setattr__``)."""

    stream_id: int
    head: RequestHead
    ended: bool
    body: tuple[bytes, int] | None = None


@attrs.frozen
class RequestRefused:
    """A request head on a new stream is malformed or too large: answer ``status``."""

    stream_id: int
    status: int
    message: str
    method: bytes


@attrs.frozen
class BodyReceived:
    """Request body bytes; ``flow_length`` is what they cost the windows (with padding)."""

    stream_id: int
    data: bytes
    flow_length: int


@attrs.frozen
class BodyEnded:
    stream_id: int


@attrs.frozen
class StreamReset:
    """The stream ended before its response did: the client reset it, or the adapter did
    (a body that broke its Content-Length)."""

    stream_id: int


@attrs.frozen
class WindowOpened:
    """The peer opened a send window: stream ``stream_id``'s, or every stream's (``0``)."""

    stream_id: int


@attrs.frozen
class PingAcked:
    data: bytes


@attrs.frozen
class PeerClosed:
    """The client sent GOAWAY."""

    error_code: int


Event = (
    RequestStarted
    | RequestRefused
    | BodyReceived
    | BodyEnded
    | StreamReset
    | WindowOpened
    | PingAcked
    | PeerClosed
)
