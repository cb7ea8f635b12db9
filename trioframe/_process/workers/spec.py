"""What the supervisor tells a worker it starts (``WorkerSpec``), and the timings they share."""

from __future__ import annotations

import attrs

from ..._server.config import ServerConfig

__all__ = ["BEAT_INTERVAL", "WorkerSpec", "log_format"]

#: Seconds between two heartbeats of a worker's trio loop.
BEAT_INTERVAL = 1.0


@attrs.frozen
class WorkerSpec:
    """Everything a worker needs, pickled to its stdin by the supervisor."""

    target: str  # "MODULE:ATTR" or "path/file.py:ATTR"
    host: str
    port: int
    config: ServerConfig
    socket_fds: tuple[int, ...]  # listening sockets, inherited
    channel_fd: int  # the write end of the pipe to the supervisor, inherited
    log_level: int
    max_requests: int | None  # retire after this many requests (None: never)


def log_format() -> str:
    """The log line format of the supervisor and its workers: with the process id, since
    their lines interleave on one stderr."""
    return "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"
