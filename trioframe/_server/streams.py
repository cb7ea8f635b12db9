"""Serving one accepted stream: the TLS handshake (when the server speaks HTTPS), the choice
of protocol (``_protocol/negotiate.py``: the ALPN result on TLS; on cleartext with HTTP/2
enabled, whether the first bytes are the HTTP/2 preface), and the served connection that
speaks it, registered with the server's state while it runs.

This is the one place a protocol is chosen. It runs in the connection's own task, so a slow
handshake only ever delays itself; anything that fails in it ends this connection only. While
those opening steps run, the connection is an ``Opening`` in ``ServingState.opening``: at
``max_connections`` a waiting client may have it closed (policy in ``slots.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from .._protocol.negotiate import H2_PREFACE, Protocol, choose_protocol, needs_more_bytes
from .address import format_peer
from .http1.connection import HTTP1Connection
from .slots import Evictable, Rank, unread_input
from .tls import handshake, tls_info

if TYPE_CHECKING:
    from .._http.tls import TLSInfo
    from .served import ServedConnection
    from .state import ServingState

__all__ = ["Opening", "serve_stream"]

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
        observer = state.app.observer
        if observer is not None:
            observer.connection_opened(connection.protocol)
        try:
            await connection.run()
        finally:
            state.forget(connection)
            if observer is not None:
                observer.connection_closed(connection.protocol)
    except* Exception:  # a bug of ours on one connection must not end the server
        log.exception("connection from %s failed; it is closed", format_peer(client))
        await trio.aclose_forcefully(stream)


async def _connect(
    state: ServingState, stream: trio.abc.Stream, client: tuple[str, int] | None
) -> ServedConnection | None:
    """The opening steps the config asks for (a PROXY header, the TLS handshake, the first
    bytes on cleartext with HTTP/2), then the served connection for the chosen protocol;
    ``None`` (the stream closed) when an opening step failed or the connection was evicted
    meanwhile."""
    tcp_peer = client  # (a PROXY header may name another client)
    protocols = state.config.protocols
    proxies = state.proxies
    proxy_header = proxies is not None and proxies.proxy_protocol
    tls: TLSInfo | None = None
    first = b""
    if proxy_header or state.tls_context is not None or protocols.http2:
        opening = Opening(stream)
        state.opening.add(opening)
        state.slot_evictable()
        try:
            with opening.scope:
                opened = await _open(state, stream, client)
        finally:
            state.opening.discard(opening)
        if opened is None or opening.scope.cancel_called:  # failed, or evicted
            await trio.aclose_forcefully(stream)
            return None
        stream, client, tls, first = opened
    alpn = tls.alpn_protocol if tls is not None else None
    if choose_protocol(alpn, first, http2_enabled=protocols.http2) is Protocol.HTTP2:
        from .http2.connection import HTTP2Connection  # h2: imported only once it is needed

        connection: ServedConnection = HTTP2Connection(state, stream, client, tls, first)
    else:
        connection = HTTP1Connection(state, stream, client, tls, first)
    connection.peer = tcp_peer
    return connection


async def _open(
    state: ServingState, stream: trio.abc.Stream, client: tuple[str, int] | None
) -> tuple[trio.abc.Stream, tuple[str, int] | None, TLSInfo | None, bytes] | None:
    """The opening steps: ``(stream, client, tls, first bytes)`` to serve, or ``None`` when a
    step failed. Cancellation (an eviction): a plain wait; the caller closes the stream."""
    proxies = state.proxies
    if proxies is not None and proxies.proxy_protocol:  # before anything else, TLS included
        accepted, client = await proxies.read_proxy_header(stream, client)
        if not accepted:
            return None
    tls: TLSInfo | None = None
    if state.tls_context is not None:
        peer, timeout = format_peer(client), state.config.protocols.tls_handshake_timeout
        with trio.move_on_after(timeout) as waiting:
            secured = await handshake(stream, state.tls_context, peer)
        if waiting.cancelled_caught or secured is None:
            observer = state.app.observer
            if observer is not None:
                observer.tls_handshake_failed("timeout" if waiting.cancelled_caught else "error")
        if waiting.cancelled_caught:
            log.debug("TLS handshake with %s timed out after %s s", peer, timeout)
            return None
        if secured is None:
            return None  # the handshake failed
        stream, tls = secured, tls_info(secured)
    first = b""
    if state.config.protocols.http2 and tls is None:  # cleartext: HTTP/2 with prior knowledge opens
        with trio.move_on_after(state.config.timeouts.header_timeout):  # with the preface
            while needs_more_bytes(first, http2_enabled=True):
                try:
                    data = await stream.receive_some(len(H2_PREFACE) - len(first))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    break
                first += data
    return stream, client, tls, first


class Opening:
    """An accepted connection whose protocol does not run yet, as the connection limit sees
    it (a ``SlotHolder``): waiting for its client since it was accepted, evictable unless
    bytes wait unread in its socket. Evicting it cancels ``scope``, which the opening steps
    run in."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream  # the accepted stream (TCP under any TLS to come)
        self.scope = trio.CancelScope()
        self.since = trio.current_time()

    @property
    def evictable(self) -> Evictable | None:
        if self.scope.cancel_called:
            return None
        return Evictable(Rank.WAITING, self.since, "opening")

    def evict(self, reason: str) -> bool:
        if self.scope.cancel_called or unread_input(self.stream):
            return False
        self.scope.cancel()
        return True
