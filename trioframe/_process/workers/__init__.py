"""Worker processes: ``ServerConfig.workers`` above 1 (or ``trioframe run --workers N``).

A supervisor without a trio loop binds the sockets and spawns the workers, which import the
application themselves and serve it in their own trio runs (see ``supervisor.py``)."""

from __future__ import annotations

import ssl

from ..._errors import ConfigurationError
from ..._server.config import ServerConfig
from ..._server.tls import SelfSigned, self_signed_files
from .sockets import reuse_port_supported
from .supervisor import Supervisor
from .target import import_router, target_of

__all__ = ["import_router", "run_workers", "target_of"]


def run_workers(target: str, host: str, port: int, config: ServerConfig) -> int:
    """Serve ``target`` ("MODULE:ATTR" or "file.py:ATTR") with ``config.workers`` worker
    processes until SIGINT/SIGTERM; the exit status: 0 after a graceful shutdown, 1 after a
    second signal, 3 when a worker failed to start. Raises ``OSError`` when the address
    cannot be bound and ``ConfigurationError`` for a config workers cannot share."""
    tls = config.protocols.tls
    if isinstance(tls, ssl.SSLContext):
        raise ConfigurationError(
            "workers > 1 cannot share an ssl.SSLContext between processes: give the "
            "certificate and key files (with_tls(cert_file, key_file))"
        )
    if isinstance(tls, SelfSigned):  # one certificate for the whole fleet
        config = config.with_tls(*self_signed_files(tls.hosts))
    supervisor = Supervisor(
        target,
        host,
        port,
        config,
        reuse_port=config.processes.reuse_port and reuse_port_supported(),
    )
    supervisor.bind()
    return supervisor.run()
