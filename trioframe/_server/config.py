"""``ServerConfig``: every limit and timeout of the server, as one frozen value.

Durations are seconds (float). Each field has a ``with_<field>(value)`` twin that returns a
new config, so configs chain: ``ServerConfig().with_max_body_size(1024)``.
"""

from __future__ import annotations

import ssl
from typing import Any

import attrs

__all__ = ["ServerConfig"]

KiB = 1024
MiB = 1024 * KiB


def _positive(_inst: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if value <= 0:
        raise ValueError(f"ServerConfig.{attribute.name} must be positive, not {value!r}")


@attrs.frozen(kw_only=True)
class ServerConfig:
    """Server limits and protocol options (API.md section 10)."""

    #: Largest request body in bytes; larger bodies get 413 (from Content-Length before
    #: reading, or from the running total of a chunked body).
    max_body_size: int = attrs.field(default=10 * MiB, validator=_positive)
    #: Largest request head (request line + headers + blank line) in bytes → 431.
    max_header_size: int = attrs.field(default=16 * KiB, validator=_positive)
    #: Largest request line in bytes → 414.
    max_request_line_size: int = attrs.field(default=8 * KiB, validator=_positive)
    #: Most header fields in one request → 431.
    max_header_count: int = attrs.field(default=100, validator=_positive)
    #: Idle time allowed between requests on a keep-alive connection.
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive)
    #: From a connection's first byte (or the previous response) to the end of the head → 408.
    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: Longest wait between two reads of a request body → 408.
    body_timeout: float = attrs.field(default=30.0, validator=_positive)
    #: Longest wait for the client to accept response bytes; then the connection is dropped.
    send_timeout: float = attrs.field(default=60.0, validator=_positive)
    tls_handshake_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: After this many requests a connection is closed (``Connection: close``).
    max_requests_per_connection: int = attrs.field(default=1000, validator=_positive)
    #: Accepting pauses while this many connections are open.
    max_connections: int = attrs.field(default=1000, validator=_positive)
    #: Grace period for in-flight requests on shutdown.
    shutdown_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: Largest unread request body drained (instead of closing) to keep a connection alive.
    max_drain_size: int = attrs.field(default=64 * KiB, validator=_positive)
    #: A client that goes away cancels its handler.
    cancel_on_disconnect: bool = True
    http2: bool = False
    tls: ssl.SSLContext | tuple[str, str] | None = None
    max_concurrent_streams: int = attrs.field(default=100, validator=_positive)
    websocket_max_message_size: int = attrs.field(default=1 * MiB, validator=_positive)
    websocket_ping_interval: float = attrs.field(default=20.0, validator=_positive)
    websocket_ping_timeout: float = attrs.field(default=20.0, validator=_positive)
    websocket_close_timeout: float = attrs.field(default=10.0, validator=_positive)
    websocket_allowed_origins: tuple[str, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(tuple)
    )
    websocket_compression: bool = False
    workers: int = attrs.field(default=1, validator=_positive)
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    def with_http2(self, enabled: bool = True) -> ServerConfig:
        """A copy with HTTP/2 on or off."""
        return attrs.evolve(self, http2=enabled)

    def with_tls(
        self, cert_file: str | ssl.SSLContext, key_file: str | None = None
    ) -> ServerConfig:
        """A copy serving HTTPS from a certificate and key file (or an ``SSLContext``)."""
        if isinstance(cert_file, ssl.SSLContext):
            return attrs.evolve(self, tls=cert_file)
        if key_file is None:
            raise ValueError("with_tls(cert_file, key_file) needs the key file too")
        return attrs.evolve(self, tls=(cert_file, key_file))

    def __getattr__(self, name: str) -> Any:
        # with_<field>(value) for every field, generated rather than written out 25 times.
        if name.startswith("with_"):
            field = name[5:]
            if field in attrs.fields_dict(type(self)):

                def setter(value: Any) -> ServerConfig:
                    return attrs.evolve(self, **{field: value})

                setter.__doc__ = f"A copy with ``{field}`` set."
                return setter
        raise AttributeError(name)
