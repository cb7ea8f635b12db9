"""The listening sockets of a worker fleet, bound by the supervisor before any worker starts.

Two layouts. ``shared``: one socket per address, inherited by every worker; the workers take
turns accepting from one queue. ``reuse_port`` (Linux): one ``SO_REUSEPORT`` socket per worker
slot and address, and the kernel spreads new connections over them by a hash of the client's
address and port. In both, the supervisor keeps its own copy of every socket open for the
whole run: a worker that exits (a crash, a restart) never closes a socket, so connections
waiting in its queue are accepted by the worker that takes the slot over, never refused.

One exception, with ``reuse_port``: once the fleet has started, a slot whose new worker fails
to start has its sockets closed (the kernel sends that queue's connections to the other
workers' sockets from then on) and bound again, not yet listening, for the next try. A worker
listens once it has imported the application (``listen``), so a worker that cannot import it
is never sent a connection.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

__all__ = ["Address", "address_of", "bind_again", "bind_sockets", "listen", "reuse_port_supported"]

BACKLOG = 1024


def reuse_port_supported() -> bool:
    """Whether ``SO_REUSEPORT`` balances connections (Linux; elsewhere it means other
    things, or nothing)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def bind_sockets(host: str, port: int, *, reuse_port: bool) -> list[socket.socket]:
    """Listening sockets for every address of ``host`` (``"localhost"`` may be two). Port 0
    picks a free port, the same one for every address. Raises ``OSError`` (address in use)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            if port == 0 and bound:  # the port the first address got
                address = (address[0], bound[0].getsockname()[1], *address[2:])
            bound.append(_listen(family, kind, proto, address, reuse_port=reuse_port))
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    return bound


#: What binding a socket again needs: its family, type, protocol and address.
Address = tuple[int, int, int, Any]


def address_of(sock: socket.socket) -> Address:
    """What :func:`bind_again` needs to bind another socket like ``sock``."""
    return (sock.family, sock.type, sock.proto, sock.getsockname())


def bind_again(addresses: list[Address], *, listening: bool = True) -> list[socket.socket]:
    """One more ``SO_REUSEPORT`` socket for each of ``addresses``; with ``listening=False``
    bound only: no connection is queued on it until :func:`listen` is called."""
    again: list[socket.socket] = []
    try:
        for family, kind, proto, address in addresses:
            again.append(_listen(family, kind, proto, address, reuse_port=True, now=listening))
    except BaseException:
        for sock in again:
            sock.close()
        raise
    return again


def listen(sockets: list[socket.socket]) -> None:
    """Start listening on ``sockets`` (for a socket that listens already: no change)."""
    for sock in sockets:
        sock.listen(BACKLOG)


def _listen(
    family: int, kind: int, proto: int, address: Any, *, reuse_port: bool, now: bool = True
) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        if now:
            sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock
