"""Serving one accepted stream: the TLS handshake (when the server speaks HTTPS), the choice
of protocol (``_protocol/negotiate.py``: the ALPN result on TLS; on cleartext with HTTP/2
enabled, whether the first bytes are the HTTP/2 preface), and the served connection that
speaks it, registered with the server's state while it runs.

This is the one place a protocol is chosen. It runs in the connection's own task, so a slow
handshake only ever delays itself; anything that fails in it ends this connection only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from .._protocol.negotiate import H2_PREFACE, Protocol, choose_protocol, needs_more_bytes
from .address import format_peer
from .http1 import HTTP1Connection
from .tls import handshake, tls_info

if TYPE_CHECKING:
    from .._http.tls import TLSInfo
    from .served import ServedConnection
    from .state import ServingState

__all__ = ["serve_stream"]

log = logging.getLogger("trioframe")


async def serve_stream(
    state: ServingState, stream: trio.abc.Stream, client: tuple[str, int] | None
) -> None:
    """Serve ``stream`` until it closes. Never raises but for cancellation: a failure in the
    connection code is logged and closes this connection only. Cancellation closes the
    stream. (One function, not two: every coroutine in a task's await chain is resumed at
    each of its steps, several per request.)"""
    try:
        connection = await _connect(state, stream, client)
        if connection is None:
            return
        state.connections.add(connection)
        try:
            await connection.run()
        finally:
            state.forget(connection)
    except* Exception:  # a bug of ours on one connection must not end the server
        log.exception("connection from %s failed; it is closed", format_peer(client))
        await trio.aclose_forcefully(stream)


async def _connect(
    state: ServingState, stream: trio.abc.Stream, client: tuple[str, int] | None
) -> ServedConnection | None:
    """The TLS handshake when the server speaks HTTPS, then the served connection for the
    chosen protocol; ``None`` (the stream closed) when the handshake failed."""
    tls: TLSInfo | None = None
    tcp_peer = client  # (a PROXY header may name another client)
    proxies = state.proxies
    if proxies is not None and proxies.proxy_protocol:  # before anything else, TLS included
        accepted, client = await proxies.read_proxy_header(stream, client)
        if not accepted:
            await trio.aclose_forcefully(stream)
            return None
    if state.tls_context is not None:
        peer, timeout = format_peer(client), state.config.tls_handshake_timeout
        with trio.move_on_after(timeout) as waiting:
            secured = await handshake(stream, state.tls_context, peer)
        if waiting.cancelled_caught:
            log.debug("TLS handshake with %s timed out after %s s", peer, timeout)
            return None  # the stream was closed on cancellation
        if secured is None:
            return None  # the handshake failed; the stream is closed
        stream, tls = secured, tls_info(secured)
    alpn = tls.alpn_protocol if tls is not None else None
    http2 = state.config.http2
    first = b""
    if http2 and tls is None:  # cleartext: HTTP/2 with prior knowledge opens with the preface
        with trio.move_on_after(state.config.header_timeout):
            while needs_more_bytes(first, http2_enabled=True):
                try:
                    data = await stream.receive_some(len(H2_PREFACE) - len(first))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    break
                first += data
    if choose_protocol(alpn, first, http2_enabled=http2) is Protocol.HTTP2:
        from .http2 import HTTP2Connection  # h2: imported only once it is needed

        connection: ServedConnection = HTTP2Connection(state, stream, client, tls, first)
    else:
        connection = HTTP1Connection(state, stream, client, tls, first)
    connection.peer = tcp_peer
    return connection
