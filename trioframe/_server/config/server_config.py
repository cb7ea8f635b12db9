"""``ServerConfig``: every setting of the server, as one frozen value made of groups.

Users build it with flat keywords (``ServerConfig(max_body_size=1024, header_timeout=1.0)``),
read the flat names (``config.max_body_size``) and copy it with ``with_<name>(value)``, so
configs chain: ``ServerConfig().with_max_body_size(1024)``. Inside, it holds one frozen group
per concern (``GROUPS``: limits, timeouts, protocols, ...); each group's module documents
its settings (unit, default, what a client gets past a limit). trioframe's own code reads
settings through the groups (``config.limits.max_header_size``), and per-connection code
binds the groups it needs once.

The flat names are read-only properties made from ``GROUPS``, and attrs sees the flat
settings too: ``attrs.fields(ServerConfig)``, ``attrs.evolve(config, http2=True)`` and
``attrs.asdict(config)`` work with the flat names, as the keywords do.
"""

from __future__ import annotations

import operator
import os
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from ..tls import SelfSigned, TLSFiles
from .app_limits import AppLimits
from .checks import KiB, MiB
from .http2 import HTTP2Options
from .limits import Limits
from .processes import Processes
from .protocols import Protocols
from .proxies import Proxies
from .timeouts import Timeouts
from .websocket import WebSocketOptions

__all__ = ["GROUPS", "ServerConfig"]

#: Each group of settings: the ``ServerConfig`` attribute that holds it, and its class.
GROUPS: dict[str, type[Any]] = {
    "app_limits": AppLimits,
    "limits": Limits,
    "timeouts": Timeouts,
    "protocols": Protocols,
    "http2_options": HTTP2Options,
    "websocket_options": WebSocketOptions,
    "proxies": Proxies,
    "processes": Processes,
}
#: ``GROUPS`` with the keywords each group takes
_GROUP_KEYWORDS = tuple(
    (name, group, tuple(field.name for field in attrs.fields(group)))
    for name, group in GROUPS.items()
)


@attrs.frozen(init=False)
class ServerConfig:
    """Server limits and protocol options (each one documented in docs/server.md, ServerConfig).

    Sizes are bytes and durations seconds; numeric settings must be positive (``ValueError``
    otherwise). Each setting has a ``with_<name>`` method returning a modified copy."""

    app_limits: AppLimits
    limits: Limits
    timeouts: Timeouts
    protocols: Protocols
    http2_options: HTTP2Options
    websocket_options: WebSocketOptions
    proxies: Proxies
    processes: Processes

    if TYPE_CHECKING:  # the flat read-only properties (made from GROUPS below), for mypy
        max_body_size: int
        max_json_size: int
        websocket_max_message_size: int
        websocket_allowed_origins: tuple[str, ...] | None
        websocket_compression: bool
        max_header_size: int
        max_request_line_size: int
        max_header_count: int
        max_connections: int
        max_requests_per_connection: int
        max_drain_size: int
        header_timeout: float
        body_timeout: float
        min_body_rate: float
        keep_alive_timeout: float
        send_timeout: float
        shutdown_timeout: float
        cancel_on_disconnect: bool
        http1_parser: str
        http2: bool
        tls: TLSFiles | SelfSigned | ssl.SSLContext | None
        tls_handshake_timeout: float
        max_concurrent_streams: int
        http2_max_header_list_size: int
        http2_max_continuation_frames: int
        http2_flood_allowance: int
        http2_stream_window: int
        http2_connection_window: int
        http2_max_output_buffer: int
        http2_max_frames_per_step: int
        websocket_ping_interval: float
        websocket_ping_timeout: float
        websocket_close_timeout: float
        trusted_proxies: tuple[str, ...]
        proxy_headers: str
        proxy_protocol: bool
        workers: int
        reuse_port: bool
        worker_heartbeat_timeout: float
        max_requests_per_worker: int | None
        max_requests_jitter: int

    def __init__(
        self,
        *,
        max_body_size: int = 10 * MiB,
        max_json_size: int = 256 * KiB,
        websocket_max_message_size: int = 1 * MiB,
        websocket_allowed_origins: Iterable[str] | None = None,
        websocket_compression: bool = False,
        max_header_size: int = 16 * KiB,
        max_request_line_size: int = 8 * KiB,
        max_header_count: int = 100,
        max_connections: int = 1000,
        max_requests_per_connection: int = 1000,
        max_drain_size: int = 64 * KiB,
        header_timeout: float = 10.0,
        body_timeout: float = 30.0,
        min_body_rate: float = 1024.0,
        keep_alive_timeout: float = 5.0,
        send_timeout: float = 60.0,
        shutdown_timeout: float = 10.0,
        cancel_on_disconnect: bool = True,
        http1_parser: str = "auto",
        http2: bool = False,
        tls: TLSFiles | SelfSigned | ssl.SSLContext | tuple[str, ...] | None = None,
        tls_handshake_timeout: float = 10.0,
        max_concurrent_streams: int = 100,
        http2_max_header_list_size: int = 32 * KiB,
        http2_max_continuation_frames: int = 16,
        http2_flood_allowance: int = 1000,
        http2_stream_window: int = 64 * KiB,
        http2_connection_window: int = 1 * MiB,
        http2_max_output_buffer: int = 64 * KiB,
        http2_max_frames_per_step: int = 64,
        websocket_ping_interval: float = 20.0,
        websocket_ping_timeout: float = 20.0,
        websocket_close_timeout: float = 10.0,
        trusted_proxies: Iterable[str] = (),
        proxy_headers: str = "x-forwarded",
        proxy_protocol: bool = False,
        workers: int = 1,
        reuse_port: bool = True,
        worker_heartbeat_timeout: float = 30.0,
        max_requests_per_worker: int | None = None,
        max_requests_jitter: int = 0,
    ) -> None:
        settings = locals()  # the keywords, by name: each group takes its own
        self.__attrs_init__(
            **{
                name: group(**{key: settings[key] for key in keys})
                for name, group, keys in _GROUP_KEYWORDS
            }
        )

    def with_max_body_size(self, value: int) -> ServerConfig:
        """A copy with ``max_body_size`` set."""
        return attrs.evolve(self, max_body_size=value)

    def with_max_json_size(self, value: int) -> ServerConfig:
        """A copy with ``max_json_size`` set."""
        return attrs.evolve(self, max_json_size=value)

    def with_websocket_max_message_size(self, value: int) -> ServerConfig:
        """A copy with ``websocket_max_message_size`` set."""
        return attrs.evolve(self, websocket_max_message_size=value)

    def with_websocket_allowed_origins(self, value: Iterable[str] | None) -> ServerConfig:
        """A copy with ``websocket_allowed_origins`` set."""
        return attrs.evolve(self, websocket_allowed_origins=value)

    def with_websocket_compression(self, value: bool) -> ServerConfig:
        """A copy with ``websocket_compression`` set."""
        return attrs.evolve(self, websocket_compression=value)

    def with_max_header_size(self, value: int) -> ServerConfig:
        """A copy with ``max_header_size`` set."""
        return attrs.evolve(self, max_header_size=value)

    def with_max_request_line_size(self, value: int) -> ServerConfig:
        """A copy with ``max_request_line_size`` set."""
        return attrs.evolve(self, max_request_line_size=value)

    def with_max_header_count(self, value: int) -> ServerConfig:
        """A copy with ``max_header_count`` set."""
        return attrs.evolve(self, max_header_count=value)

    def with_max_connections(self, value: int) -> ServerConfig:
        """A copy with ``max_connections`` set."""
        return attrs.evolve(self, max_connections=value)

    def with_max_requests_per_connection(self, value: int) -> ServerConfig:
        """A copy with ``max_requests_per_connection`` set."""
        return attrs.evolve(self, max_requests_per_connection=value)

    def with_max_drain_size(self, value: int) -> ServerConfig:
        """A copy with ``max_drain_size`` set."""
        return attrs.evolve(self, max_drain_size=value)

    def with_header_timeout(self, value: float) -> ServerConfig:
        """A copy with ``header_timeout`` set."""
        return attrs.evolve(self, header_timeout=value)

    def with_body_timeout(self, value: float) -> ServerConfig:
        """A copy with ``body_timeout`` set."""
        return attrs.evolve(self, body_timeout=value)

    def with_min_body_rate(self, value: float) -> ServerConfig:
        """A copy with ``min_body_rate`` set."""
        return attrs.evolve(self, min_body_rate=value)

    def with_keep_alive_timeout(self, value: float) -> ServerConfig:
        """A copy with ``keep_alive_timeout`` set."""
        return attrs.evolve(self, keep_alive_timeout=value)

    def with_send_timeout(self, value: float) -> ServerConfig:
        """A copy with ``send_timeout`` set."""
        return attrs.evolve(self, send_timeout=value)

    def with_shutdown_timeout(self, value: float) -> ServerConfig:
        """A copy with ``shutdown_timeout`` set."""
        return attrs.evolve(self, shutdown_timeout=value)

    def with_cancel_on_disconnect(self, value: bool) -> ServerConfig:
        """A copy with ``cancel_on_disconnect`` set."""
        return attrs.evolve(self, cancel_on_disconnect=value)

    def with_http1_parser(self, value: str) -> ServerConfig:
        """A copy with ``http1_parser`` set."""
        return attrs.evolve(self, http1_parser=value)

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

    def with_tls_handshake_timeout(self, value: float) -> ServerConfig:
        """A copy with ``tls_handshake_timeout`` set."""
        return attrs.evolve(self, tls_handshake_timeout=value)

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

    def with_websocket_ping_interval(self, value: float) -> ServerConfig:
        """A copy with ``websocket_ping_interval`` set."""
        return attrs.evolve(self, websocket_ping_interval=value)

    def with_websocket_ping_timeout(self, value: float) -> ServerConfig:
        """A copy with ``websocket_ping_timeout`` set."""
        return attrs.evolve(self, websocket_ping_timeout=value)

    def with_websocket_close_timeout(self, value: float) -> ServerConfig:
        """A copy with ``websocket_close_timeout`` set."""
        return attrs.evolve(self, websocket_close_timeout=value)

    def with_trusted_proxies(self, value: Iterable[str]) -> ServerConfig:
        """A copy with ``trusted_proxies`` set."""
        return attrs.evolve(self, trusted_proxies=value)

    def with_proxy_headers(self, value: str) -> ServerConfig:
        """A copy with ``proxy_headers`` set."""
        return attrs.evolve(self, proxy_headers=value)

    def with_proxy_protocol(self, enabled: bool = True) -> ServerConfig:
        """A copy with ``proxy_protocol`` set."""
        return attrs.evolve(self, proxy_protocol=enabled)

    def with_workers(self, value: int) -> ServerConfig:
        """A copy with ``workers`` set."""
        return attrs.evolve(self, workers=value)

    def with_reuse_port(self, value: bool) -> ServerConfig:
        """A copy with ``reuse_port`` set."""
        return attrs.evolve(self, reuse_port=value)

    def with_worker_heartbeat_timeout(self, value: float) -> ServerConfig:
        """A copy with ``worker_heartbeat_timeout`` set."""
        return attrs.evolve(self, worker_heartbeat_timeout=value)

    def with_max_requests_per_worker(self, value: int | None, jitter: int = 0) -> ServerConfig:
        """A copy with ``max_requests_per_worker`` and ``max_requests_jitter`` set."""
        return attrs.evolve(self, max_requests_per_worker=value, max_requests_jitter=jitter)

    def with_max_requests_jitter(self, value: int) -> ServerConfig:
        """A copy with ``max_requests_jitter`` set."""
        return attrs.evolve(self, max_requests_jitter=value)


def _flat_settings() -> None:
    """Give ``ServerConfig`` one read-only property per setting of ``GROUPS``, and make
    attrs see the flat settings (with the groups' defaults, validators and converters)."""
    flat: dict[str, Any] = {}
    for group_name, group in GROUPS.items():
        for field in attrs.fields(group):
            path = f"{group_name}.{field.name}"
            getter = property(operator.attrgetter(path), doc=f"``{path}``")
            setattr(ServerConfig, field.name, getter)
            flat[field.name] = attrs.field(
                default=field.default,
                validator=field.validator,
                converter=field.converter,
                type=field.type,
                kw_only=True,
            )
    ServerConfig.__attrs_attrs__ = attrs.fields(attrs.make_class("ServerConfig", flat))


_flat_settings()
