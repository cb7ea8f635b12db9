"""The connection limit: which connection is closed to make room for a waiting client.

A connection holds one of the ``max_connections`` slots from the moment it is accepted until
it is closed. When every slot is taken and a client waits in the listen queue, the server
closes one connection for it (``evict_one``), chosen as follows.

Evictable: a connection that is waiting for its client and serving no request.

- Opening (``streams.Opening``): accepted, its protocol not running yet: waiting for a PROXY
  header, in the TLS handshake, or (cleartext with HTTP/2 on) waiting for the first bytes
  that say which protocol it speaks.
- HTTP/1.1 waiting for a request (a new connection's first byte, or the next request on a
  keep-alive connection), or for the rest of a request head (a slowloris).
- HTTP/2 with no stream in progress (a header block may be arriving: the stream it opens has
  not started).
- HTTP/1.1 already answered and closing: lingering, reading what the client still sends so
  that closing does not reset the answer away.

Never evicted:

- a connection whose bytes have arrived and wait unread in its socket. Before closing a
  connection the server polls its socket (a zero-timeout peek, nothing is read): bytes there
  are a request it is about to read, so it serves them and another connection is chosen. A
  new connection is not waiting until it has looked at what arrived first; until then it is
  not evictable either.
- a connection serving a request: a handler runs, its body is read or its response written.
  Those are bounded instead: ``min_body_rate`` and ``body_timeout`` for the body,
  ``send_timeout`` for each write, the application for its handler.

Order: lingering connections first (they have had their answer), then the one that has waited
longest since its current wait began (its accept, the end of its last response, the first
byte of its unfinished head).

What the evicted connection's client gets: an opening or idle connection is closed; a
partial head is answered 503 with ``Connection: close``; an HTTP/2 connection gets GOAWAY
naming the last stream it processed (a client retries the others on a new connection); a
lingering connection is closed at once. A request that arrives just as its connection is
being closed is answered 503 with ``Connection: close`` (HTTP/1.1) or left beyond the GOAWAY
(HTTP/2), never reset unread.

When none is evictable, the waiting client waits until one becomes evictable (connections say
so through ``ServingState.slot_evictable``) or a slot frees.
"""

from __future__ import annotations

import enum
import socket
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import NamedTuple, Protocol

import trio

__all__ = ["Evictable", "Eviction", "Rank", "SlotHolder", "evict_one", "unread_input"]


class Rank(enum.IntEnum):
    """Which evictable connections go first (the lower rank)."""

    LINGERING = 0
    WAITING = 1


class Evictable(NamedTuple):
    """How early a connection goes when room is needed: by ``rank``, then the earliest
    ``since`` (``trio.current_time()`` when its current wait began). ``state`` says what it
    waits for, in a word for metrics: ``"opening"``, ``"idle"`` (a request), ``"head"``
    (the rest of one) or ``"lingering"``."""

    rank: Rank
    since: float
    state: str = "idle"


class Eviction(enum.Enum):
    """What ``evict_one`` did."""

    DONE = "a connection is closing to make room"
    NONE = "no connection is evictable"
    SKIPPED = "every evictable connection had unread bytes, which it is about to serve"


class SlotHolder(Protocol):
    """A connection as the connection limit sees it."""

    @property
    def evictable(self) -> Evictable | None:
        """``None`` while the connection may not be closed to make room (it is serving a
        request, or closing already)."""

    def evict(self, reason: str) -> bool:
        """Close now to make room (``reason`` is what a partial request is answered with),
        unless bytes wait unread in its socket or it is no longer evictable: returns whether
        it was evicted."""


def evict_one(
    holders: Iterable[SlotHolder],
    reason: str,
    evicted: Callable[[Evictable], object] | None = None,
) -> Eviction:
    """Evict the first of ``holders`` in the policy's order that can be evicted now (and
    tell ``evicted`` how it was waiting). Linear in the number of connections, plus a sort of
    the evictable ones: it runs only at ``max_connections``, once per waiting client."""
    candidates = [(e, holder) for holder in holders if (e := holder.evictable) is not None]
    if not candidates:
        return Eviction.NONE
    candidates.sort(key=itemgetter(0))
    for waiting, holder in candidates:
        if holder.evict(reason):
            if evicted is not None:
                evicted(waiting)
            return Eviction.DONE
    return Eviction.SKIPPED


def unread_input(stream: trio.abc.Stream) -> bool:
    """Whether bytes have arrived on the TCP socket under ``stream`` (through TLS too) and
    wait to be read; peeks without reading or waiting. False at the end of the stream, for a
    broken connection, and for a stream with no socket under it (nothing can be known)."""
    while isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    if not isinstance(stream, trio.SocketStream):
        return False
    fd = stream.socket.fileno()
    if fd == -1:
        return False
    # The same descriptor as a standard socket object, borrowed (detached, never closed).
    try:
        borrowed = socket.socket(fileno=fd)
    except OSError:
        return False
    try:
        borrowed.setblocking(False)
        return bool(borrowed.recv(1, socket.MSG_PEEK))
    except OSError:  # nothing there (BlockingIOError), or the connection broke
        return False
    finally:
        borrowed.detach()
