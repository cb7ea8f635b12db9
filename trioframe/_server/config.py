"""``ServerConfig``: every limit and timeout of the server, as one frozen value.

Durations are seconds (float). Each field has a ``with_<field>(value)`` twin that returns a
new config, so configs chain: ``ServerConfig().with_max_body_size(1024)``.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterable
from typing import Any

import attrs

from .tls import SelfSigned, TLSFiles

#: the values ``ServerConfig.http1_parser`` takes
HTTP1_PARSERS = ("auto", "h11", "llhttp")
#: the values ``ServerConfig.proxy_headers`` takes
PROXY_HEADERS = ("x-forwarded", "forwarded")

__all__ = ["ServerConfig"]

KiB = 1024
MiB = 1024 * KiB


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _optional_strings(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _tls_setting(value: Any) -> TLSFiles | SelfSigned | ssl.SSLContext | None:
    if isinstance(value, tuple):  # (cert_file, key_file)
        return TLSFiles(*value)
    return value  # type: ignore[no-any-return]


def _window_size(_inst: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if not 65535 <= value <= 2**31 - 1:
        raise ValueError(f"ServerConfig.{attribute.name} must be in 65535..2**31-1, not {value!r}")


def _positive(_inst: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if value <= 0:
        raise ValueError(f"ServerConfig.{attribute.name} must be positive, not {value!r}")


@attrs.frozen(kw_only=True)
class ServerConfig:
    """Server limits and protocol options (each one documented in docs/server.md, ServerConfig)."""

    #: Largest request body in bytes; larger bodies get 413 (from Content-Length before
    #: reading, or from the running total of a chunked body).
    max_body_size: int = attrs.field(default=10 * MiB, validator=_positive)
    #: Largest body ``Json[T]`` parses, in bytes → 413. The stdlib parser holds the event loop
    #: for the whole parse (up to about 50 ms for the worst 256 KiB body on a small machine),
    #: so this bounds how long one request can stall every other.
    max_json_size: int = attrs.field(default=256 * KiB, validator=_positive)
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
    #: Slowest average a request body may arrive at, in bytes per second: the time spent
    #: waiting for a body may reach ``body_timeout`` plus one second per ``min_body_rate``
    #: bytes received → 408.
    min_body_rate: float = attrs.field(default=1024.0, validator=_positive)
    #: Longest wait for the client to accept response bytes; then the connection is dropped.
    send_timeout: float = attrs.field(default=60.0, validator=_positive)
    #: Longest a TLS handshake may take (a client that connects and sends nothing is closed).
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
    #: HTTP/2: ALPN ``h2`` on TLS, prior-knowledge h2c on cleartext.
    http2: bool = False
    #: HTTPS: certificate files (``TLSFiles``; a ``(cert_file, key_file)`` tuple is accepted),
    #: a development certificate (``SelfSigned``) or an ``ssl.SSLContext``; ``None``: plain HTTP.
    tls: TLSFiles | SelfSigned | ssl.SSLContext | None = attrs.field(
        default=None, converter=_tls_setting
    )
    #: HTTP/2: streams in progress per connection (a reset stream counts until its handler
    #: has returned); more are refused with RST_STREAM(REFUSED_STREAM).
    max_concurrent_streams: int = attrs.field(default=100, validator=_positive)
    #: HTTP/2: largest request header list (name + value + 32 bytes per field, as RFC 9113
    #: counts it) → 431 on the stream; past twice this the connection ends (an HPACK bomb).
    http2_max_header_list_size: int = attrs.field(default=32 * KiB, validator=_positive)
    #: HTTP/2: most CONTINUATION frames one header block may use; more ends the connection
    #: with GOAWAY(ENHANCE_YOUR_CALM). At most 63.
    http2_max_continuation_frames: int = attrs.field(
        default=16, validator=attrs.validators.and_(_positive, attrs.validators.le(63))
    )
    #: HTTP/2: frames (and server-side resets) that do no work a connection may cost beyond
    #: twice the work it gets done, before GOAWAY(ENHANCE_YOUR_CALM); see docs/http2.md.
    http2_flood_allowance: int = attrs.field(default=1000, validator=_positive)
    #: HTTP/2: request body bytes one stream may have buffered ahead of its handler (the
    #: stream flow-control window, reopened as the handler reads). At least 65535.
    http2_stream_window: int = attrs.field(
        default=64 * KiB, validator=attrs.validators.and_(_window_size, _positive)
    )
    #: HTTP/2: request body bytes all the streams of a connection may have buffered ahead
    #: of their handlers (the connection flow-control window). At least 65535.
    http2_connection_window: int = attrs.field(
        default=1 * MiB, validator=attrs.validators.and_(_window_size, _positive)
    )
    #: HTTP/2: response bytes queued for one connection past which senders wait and the
    #: server stops reading from the client (until the client reads).
    http2_max_output_buffer: int = attrs.field(default=64 * KiB, validator=_positive)
    #: HTTP/2: most frames of one read handled in one go; the rest of the read waits until
    #: other connections have run (and the streams it opened past ``max_concurrent_streams``
    #: are refused), so that a read of thousands of small frames cannot hold the event loop.
    http2_max_frames_per_step: int = attrs.field(default=64, validator=_positive)
    #: Largest WebSocket message in bytes, all its fragments together (inflated) → close 1009.
    websocket_max_message_size: int = attrs.field(default=1 * MiB, validator=_positive)
    #: Seconds between keep-alive pings on an open WebSocket.
    websocket_ping_interval: float = attrs.field(default=20.0, validator=_positive)
    #: A peer that has not answered a keep-alive ping this long after it is dropped.
    websocket_ping_timeout: float = attrs.field(default=20.0, validator=_positive)
    #: Longest wait for the peer's Close after the server's, and the grace a handler gets
    #: (with ``cancel_on_disconnect``) after its connection has ended; also the longest the
    #: server waits for the handler to answer the messages that came before the peer's Close
    #: (then it replies) or before a bad frame (then it fails the connection).
    websocket_close_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: Origins allowed to open a WebSocket (``None``: any; ``"*"`` in the list: any) → 403.
    websocket_allowed_origins: tuple[str, ...] | None = attrs.field(
        default=None, converter=_optional_strings
    )
    #: Accept permessage-deflate offers (inflation is capped by the message size).
    websocket_compression: bool = False
    #: The HTTP/1.1 parser: ``"h11"``, ``"llhttp"`` (the ``speedups`` extra) or ``"auto"``
    #: (llhttp when the extra is installed, else h11); both are held to the same strictness.
    http1_parser: str = attrs.field(default="auto", validator=attrs.validators.in_(HTTP1_PARSERS))
    #: Worker processes serving the same port (above 1: a supervisor process starts them;
    #: see docs/deployment.md).
    workers: int = attrs.field(default=1, validator=_positive)
    #: A worker is replaced after serving about this many requests (``None``: never), each
    #: worker's figure lowered by a random part of ``max_requests_jitter`` so that workers
    #: are not all replaced at once. Needs ``workers`` above 1.
    max_requests_per_worker: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive)
    )
    max_requests_jitter: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    #: With workers on Linux: one ``SO_REUSEPORT`` socket per worker, so the kernel spreads
    #: connections evenly (False: one socket all workers accept from).
    reuse_port: bool = True
    #: A worker whose trio loop has not answered the supervisor's heartbeat for this long is
    #: killed and replaced.
    worker_heartbeat_timeout: float = attrs.field(default=30.0, validator=_positive)
    #: Addresses, CIDR networks or ``"unix"``: peers whose forwarding headers (and PROXY
    #: protocol header) are believed. See docs/deployment.md, Proxies.
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: Which forwarding headers trusted proxies send: ``"x-forwarded"`` (``X-Forwarded-For``,
    #: ``-Proto``, ``-Host``) or ``"forwarded"`` (RFC 7239 ``Forwarded``). Only one family
    #: is read: a proxy that sets one usually passes the client's own copy of the other on.
    proxy_headers: str = attrs.field(
        default="x-forwarded", validator=attrs.validators.in_(PROXY_HEADERS)
    )
    #: Expect a PROXY protocol header (v1 or v2) at the start of every connection from a
    #: trusted proxy; its source address becomes ``request.client``.
    proxy_protocol: bool = False

    def with_http2(self, enabled: bool = True) -> ServerConfig:
        """A copy with HTTP/2 on or off."""
        return attrs.evolve(self, http2=enabled)

    def with_tls(
        self,
        cert_file: str | os.PathLike[str] | ssl.SSLContext,
        key_file: str | os.PathLike[str] | None = None,
        *,
        client_ca: str | os.PathLike[str] | None = None,
    ) -> ServerConfig:
        """A copy serving HTTPS from PEM certificate-chain and key files, or from an
        ``ssl.SSLContext`` used as given (trioframe only sets its ALPN protocols).

        ``client_ca``: a CA bundle that clients must present a certificate from (mutual TLS;
        ``request.tls.client_certificate`` is then the verified certificate)."""
        if isinstance(cert_file, ssl.SSLContext):
            if key_file is not None or client_ca is not None:
                raise ValueError("with_tls(context) takes no key_file or client_ca")
            return attrs.evolve(self, tls=cert_file)
        if key_file is None:
            raise ValueError("with_tls(cert_file, key_file) needs the key file too")
        ca = None if client_ca is None else os.fspath(client_ca)
        return attrs.evolve(self, tls=TLSFiles(os.fspath(cert_file), os.fspath(key_file), ca))

    def with_self_signed(
        self, hosts: Iterable[str] = ("localhost", "127.0.0.1", "::1")
    ) -> ServerConfig:
        """A copy serving HTTPS with a development certificate for ``hosts``, made in memory
        at startup (the ``self-signed`` extra). The CA's certificate is written to a file
        whose path is logged, for curl or httpx to trust. Never for production."""
        return attrs.evolve(self, tls=SelfSigned(tuple(hosts)))

    def with_max_body_size(self, value: int) -> ServerConfig:
        """A copy with ``max_body_size`` set."""
        return attrs.evolve(self, max_body_size=value)

    def with_max_json_size(self, value: int) -> ServerConfig:
        """A copy with ``max_json_size`` set."""
        return attrs.evolve(self, max_json_size=value)

    def with_max_header_size(self, value: int) -> ServerConfig:
        """A copy with ``max_header_size`` set."""
        return attrs.evolve(self, max_header_size=value)

    def with_max_request_line_size(self, value: int) -> ServerConfig:
        """A copy with ``max_request_line_size`` set."""
        return attrs.evolve(self, max_request_line_size=value)

    def with_max_header_count(self, value: int) -> ServerConfig:
        """A copy with ``max_header_count`` set."""
        return attrs.evolve(self, max_header_count=value)

    def with_keep_alive_timeout(self, value: float) -> ServerConfig:
        """A copy with ``keep_alive_timeout`` set."""
        return attrs.evolve(self, keep_alive_timeout=value)

    def with_header_timeout(self, value: float) -> ServerConfig:
        """A copy with ``header_timeout`` set."""
        return attrs.evolve(self, header_timeout=value)

    def with_body_timeout(self, value: float) -> ServerConfig:
        """A copy with ``body_timeout`` set."""
        return attrs.evolve(self, body_timeout=value)

    def with_min_body_rate(self, value: float) -> ServerConfig:
        """A copy with ``min_body_rate`` set."""
        return attrs.evolve(self, min_body_rate=value)

    def with_send_timeout(self, value: float) -> ServerConfig:
        """A copy with ``send_timeout`` set."""
        return attrs.evolve(self, send_timeout=value)

    def with_tls_handshake_timeout(self, value: float) -> ServerConfig:
        """A copy with ``tls_handshake_timeout`` set."""
        return attrs.evolve(self, tls_handshake_timeout=value)

    def with_max_requests_per_connection(self, value: int) -> ServerConfig:
        """A copy with ``max_requests_per_connection`` set."""
        return attrs.evolve(self, max_requests_per_connection=value)

    def with_max_connections(self, value: int) -> ServerConfig:
        """A copy with ``max_connections`` set."""
        return attrs.evolve(self, max_connections=value)

    def with_shutdown_timeout(self, value: float) -> ServerConfig:
        """A copy with ``shutdown_timeout`` set."""
        return attrs.evolve(self, shutdown_timeout=value)

    def with_max_drain_size(self, value: int) -> ServerConfig:
        """A copy with ``max_drain_size`` set."""
        return attrs.evolve(self, max_drain_size=value)

    def with_cancel_on_disconnect(self, value: bool) -> ServerConfig:
        """A copy with ``cancel_on_disconnect`` set."""
        return attrs.evolve(self, cancel_on_disconnect=value)

    def with_max_concurrent_streams(self, value: int) -> ServerConfig:
        """A copy with ``max_concurrent_streams`` set."""
        return attrs.evolve(self, max_concurrent_streams=value)

    def with_http2_max_header_list_size(self, value: int) -> ServerConfig:
        """A copy with ``http2_max_header_list_size`` set."""
        return attrs.evolve(self, http2_max_header_list_size=value)

    def with_http2_max_continuation_frames(self, value: int) -> ServerConfig:
        """A copy with ``http2_max_continuation_frames`` set."""
        return attrs.evolve(self, http2_max_continuation_frames=value)

    def with_http2_flood_allowance(self, value: int) -> ServerConfig:
        """A copy with ``http2_flood_allowance`` set."""
        return attrs.evolve(self, http2_flood_allowance=value)

    def with_http2_stream_window(self, value: int) -> ServerConfig:
        """A copy with ``http2_stream_window`` set."""
        return attrs.evolve(self, http2_stream_window=value)

    def with_http2_connection_window(self, value: int) -> ServerConfig:
        """A copy with ``http2_connection_window`` set."""
        return attrs.evolve(self, http2_connection_window=value)

    def with_http2_max_output_buffer(self, value: int) -> ServerConfig:
        """A copy with ``http2_max_output_buffer`` set."""
        return attrs.evolve(self, http2_max_output_buffer=value)

    def with_http2_max_frames_per_step(self, value: int) -> ServerConfig:
        """A copy with ``http2_max_frames_per_step`` set."""
        return attrs.evolve(self, http2_max_frames_per_step=value)

    def with_websocket_max_message_size(self, value: int) -> ServerConfig:
        """A copy with ``websocket_max_message_size`` set."""
        return attrs.evolve(self, websocket_max_message_size=value)

    def with_websocket_ping_interval(self, value: float) -> ServerConfig:
        """A copy with ``websocket_ping_interval`` set."""
        return attrs.evolve(self, websocket_ping_interval=value)

    def with_websocket_ping_timeout(self, value: float) -> ServerConfig:
        """A copy with ``websocket_ping_timeout`` set."""
        return attrs.evolve(self, websocket_ping_timeout=value)

    def with_websocket_close_timeout(self, value: float) -> ServerConfig:
        """A copy with ``websocket_close_timeout`` set."""
        return attrs.evolve(self, websocket_close_timeout=value)

    def with_websocket_allowed_origins(self, value: Iterable[str] | None) -> ServerConfig:
        """A copy with ``websocket_allowed_origins`` set."""
        return attrs.evolve(self, websocket_allowed_origins=value)

    def with_websocket_compression(self, value: bool) -> ServerConfig:
        """A copy with ``websocket_compression`` set."""
        return attrs.evolve(self, websocket_compression=value)

    def with_workers(self, value: int) -> ServerConfig:
        """A copy with ``workers`` set."""
        return attrs.evolve(self, workers=value)

    def with_trusted_proxies(self, value: Iterable[str]) -> ServerConfig:
        """A copy with ``trusted_proxies`` set."""
        return attrs.evolve(self, trusted_proxies=value)

    def with_proxy_headers(self, value: str) -> ServerConfig:
        """A copy with ``proxy_headers`` set."""
        return attrs.evolve(self, proxy_headers=value)

    def with_proxy_protocol(self, enabled: bool = True) -> ServerConfig:
        """A copy with ``proxy_protocol`` set."""
        return attrs.evolve(self, proxy_protocol=enabled)

    def with_max_requests_per_worker(self, value: int | None, jitter: int = 0) -> ServerConfig:
        """A copy with ``max_requests_per_worker`` and ``max_requests_jitter`` set."""
        return attrs.evolve(self, max_requests_per_worker=value, max_requests_jitter=jitter)

    def with_worker_heartbeat_timeout(self, value: float) -> ServerConfig:
        """A copy with ``worker_heartbeat_timeout`` set."""
        return attrs.evolve(self, worker_heartbeat_timeout=value)
