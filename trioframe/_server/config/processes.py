"""``Processes``: worker processes serving one port (docs/deployment.md). ``Server.run()``
and the command line start them; ``serve()`` runs in the calling process and refuses more
than one."""

from __future__ import annotations

import attrs

from .checks import positive

__all__ = ["Processes"]


@attrs.frozen(kw_only=True)
class Processes:
    """How many workers, how they share the port, and when they are replaced."""

    #: Worker processes serving the same port (default 1; above 1 a supervisor process
    #: starts them).
    workers: int = attrs.field(default=1, validator=positive)
    #: With workers on Linux: one ``SO_REUSEPORT`` socket per worker, so the kernel spreads
    #: connections evenly (default True; False: one socket all workers accept from).
    reuse_port: bool = True
    #: A worker whose trio loop has not answered the supervisor's heartbeat for this many
    #: seconds (default 30) is killed and replaced.
    worker_heartbeat_timeout: float = attrs.field(default=30.0, validator=positive)
    #: A worker is replaced after serving about this many requests (default ``None``:
    #: never), each worker's figure lowered by a random part of ``max_requests_jitter``
    #: so that workers are not all replaced at once. Needs ``workers`` above 1.
    max_requests_per_worker: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(positive)
    )
    #: The most ``max_requests_per_worker`` is lowered by, at random, per worker (default 0).
    max_requests_jitter: int = attrs.field(default=0, validator=attrs.validators.ge(0))
