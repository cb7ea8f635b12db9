"""The listening sockets of a worker fleet, bound by the supervisor before any worker starts.

Two layouts. ``shared``: one socket per address, inherited by every worker; the workers take
turns accepting from one queue. ``reuse_port`` (Linux): one ``SO_REUSEPORT`` socket per worker
slot and address, and the kernel spreads new connections over them by a hash of the client's
address and port. In both, the supervisor keeps its own copy of every socket open for the
whole run: a worker that exits (a crash, a restart) never closes a socket, so connections
waiting in its queue are accepted by the worker that takes the slot over, never refused.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

__all__ = ["bind_again", "bind_sockets", "reuse_port_supported"]

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


def bind_again(sockets: list[socket.socket]) -> list[socket.socket]:
    """One more ``SO_REUSEPORT`` socket for each of ``sockets`` (their addresses)."""
    again: list[socket.socket] = []
    try:
        for original in sockets:
            again.append(
                _listen(
                    original.family,
                    original.type,
                    original.proto,
                    original.getsockname(),
                    reuse_port=True,
                )
            )
    except BaseException:
        for sock in again:
            sock.close()
        raise
    return again


def _listen(family: int, kind: int, proto: int, address: Any, *, reuse_port: bool) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock
