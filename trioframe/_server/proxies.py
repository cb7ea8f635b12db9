"""Who the client is behind a trusted reverse proxy: the server's use of ``_proxy``.

``ProxyPolicy`` is built once per server from ``trusted_proxies``, ``proxy_headers`` and
``proxy_protocol``. Per connection, ``read_proxy_header`` reads a PROXY protocol header from a
trusted peer before anything else (TLS included). Per request, ``apply`` sets
``request.client``, ``scheme`` and the ``Host`` header from the forwarding headers of a
trusted peer; the address the connection really came from stays in ``request.peer``.
"""

from __future__ import annotations

import logging
import socket

import trio

from .._errors import ConfigurationError
from .._http.headers import Headers
from .._proxy import (
    ProxyProtocolError,
    TrustedProxies,
    header_length,
    parse_header,
    resolve_forwarded,
)
from .address import format_peer
from .config import ServerConfig

__all__ = ["ProxyPolicy"]

log = logging.getLogger("trioframe")

Address = tuple[str, int]


class ProxyPolicy:
    """The trusted proxies of one server and what is believed from them."""

    def __init__(self, config: ServerConfig) -> None:
        proxies = config.proxies
        try:
            self.trusted = TrustedProxies(proxies.trusted_proxies)
        except ValueError as error:
            raise ConfigurationError(f"trusted_proxies: {error}") from None
        if proxies.proxy_protocol and not self.trusted:
            raise ConfigurationError(
                "proxy_protocol=True needs trusted_proxies: the PROXY header is believed "
                "only from them"
            )
        self.mode = proxies.proxy_headers
        self.proxy_protocol = proxies.proxy_protocol
        self.header_timeout = config.timeouts.header_timeout

    @classmethod
    def of(cls, config: ServerConfig) -> ProxyPolicy | None:
        """The policy, or ``None`` when no proxy is trusted (nothing to do per request)."""
        if not config.proxies.trusted_proxies and not config.proxies.proxy_protocol:
            return None
        return cls(config)

    def decide(
        self, client: Address | None, scheme: str, headers: Headers
    ) -> tuple[Address | None, str, Headers]:
        """The request's ``(client, scheme, headers)`` once the forwarding headers are
        believed: only when ``client`` (the connection's own peer, or the source a PROXY
        header named) is a trusted proxy; a forwarded host replaces ``Host``."""
        found = resolve_forwarded(client, headers.raw, self.trusted, self.mode)
        if found is None:
            return client, scheme, headers
        if found.client is not None:
            client = found.client
        if found.scheme is not None:
            scheme = found.scheme
        if found.host is not None:
            raw = [(k, v) for k, v in headers.raw if k != b"host"]
            raw.insert(0, (b"host", found.host.encode("ascii")))
            headers = Headers(tuple(raw))
        return client, scheme, headers

    async def read_proxy_header(
        self, stream: trio.abc.Stream, client: Address | None
    ) -> tuple[bool, Address | None]:
        """At the start of a connection: ``(ok, client)``. From an untrusted peer (or with
        ``proxy_protocol`` off) nothing is read. From a trusted one a PROXY header must come
        first: its source becomes the client (kept when it names none: a health check's
        LOCAL). ``ok`` is False when the header is missing, malformed or late (the
        connection is then closed: logged as a warning, since a trusted proxy sent it).
        Reads with ``MSG_PEEK`` and consumes only the header's bytes. Cancellation: a plain
        wait for bytes."""
        if not self.proxy_protocol or not self.trusted.trusts(client and client[0]):
            return True, client
        sock = getattr(stream, "socket", None)
        if sock is None:  # not a socket (an in-memory stream): no PROXY header there
            return True, client
        received = b""
        with trio.move_on_after(self.header_timeout):
            try:
                while True:
                    peeked = await sock.recv(4096, socket.MSG_PEEK)
                    if not peeked:
                        raise ProxyProtocolError("the connection closed first")
                    length = header_length(received + peeked)
                    wanted = len(peeked) if length is None else length - len(received)
                    received += await sock.recv(wanted)
                    if length is not None and len(received) == length:
                        header = parse_header(received)
                        return True, header.source or client
            except (ProxyProtocolError, OSError) as error:
                log.warning("bad PROXY header from %s: %s", format_peer(client), error)
                return False, client
        log.warning("no PROXY header from %s within header_timeout", format_peer(client))
        return False, client
