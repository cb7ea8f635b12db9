"""The supervisor of a worker fleet: one process without a trio loop.

It binds the sockets, spawns the workers (``python -m trioframe._process.workers.worker``, each in
its own process group, so a terminal's Ctrl-C reaches only the supervisor), and then loops
on ``selectors`` over one pipe per worker and a wake-up pipe for signals:

* a worker that fails while the fleet first starts (before every worker has been ready once)
  stops the fleet: exit status 3, its reason logged;
* later, a worker that exits (or is killed), or a new one that fails to start, is logged and
  its slot started again after a backoff that doubles with each failure in a row of its slot
  (0.5 s up to 10 s): the other workers keep serving (a replacement started by SIGHUP or a
  request budget that fails to start is only logged: the worker it was to replace keeps
  serving);
* a worker whose heartbeat has been silent for ``worker_heartbeat_timeout`` is killed (its
  trio loop is stuck) and started again. With ``reuse_port``, each worker has its own accept
  queue, which waits while its worker is stuck: after ``STALL_AFTER`` seconds of silence a
  stand-in is started on the same socket, takes that queue over, and the silent worker is
  drained (or killed when its timeout comes);
* SIGTERM / SIGINT: every worker drains gracefully (SIGTERM), killed if still running after
  ``shutdown_timeout`` plus a grace; exit status 0. A second signal kills them all: status 1;
* SIGHUP: a rolling restart, one slot at a time: the new worker is serving before the old
  one is told to drain, so no connection is refused;
* a worker that says ``retire`` (its request budget is spent) is replaced the same way.

The workers share one directory for prometheus_client's multiprocess mode, so that an app's
metrics (``Router.metrics``) sum the fleet; a worker that exits is marked dead there
(``metrics_dir.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import random
import selectors
import signal
import socket
import subprocess
import sys
import time

import attrs

from ..._server.address import format_peer
from ..._server.config import ServerConfig
from .metrics_dir import MetricsDirectory
from .sockets import Address, address_of, bind_again, bind_sockets
from .spec import WorkerSpec

__all__ = ["Supervisor"]

log = logging.getLogger("trioframe")

#: After ``shutdown_timeout``, how long a draining worker may still take before it is killed.
DRAIN_GRACE = 3.0
#: The first and the longest wait before a crashed worker's slot is started again.
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 10.0
#: A worker that ran this long before it crashed resets its slot's backoff.
STABLE_AFTER = 10.0
#: With ``reuse_port``: after this many seconds without a heartbeat, a worker's socket (and
#: the connections queued on it) is handed to a stand-in.
STALL_AFTER = 5.0
#: The longest one message line may be (a startup failure's reason is cut to fit).
MAX_LINE = 4096


@attrs.define(eq=False)
class Worker:
    """One worker process and what the supervisor knows about it."""

    slot: int
    process: subprocess.Popen[bytes]
    channel: int  # read end of its pipe
    started: float
    last_beat: float
    buffer: bytes = b""
    ready: bool = False
    failure: str | None = None  # its "failed" reason
    draining: float | None = None  # when it was told to drain
    replaces: Worker | None = None  # the worker it takes over from once ready
    replaced: bool = False  # a replacement is on its way
    hung: bool = False


class Supervisor:
    """Runs ``config.workers`` workers serving ``target`` on ``host:port`` until a signal."""

    def __init__(
        self, target: str, host: str, port: int, config: ServerConfig, *, reuse_port: bool
    ) -> None:
        self.target = target
        self.host, self.port = host, port
        self.config = config
        self.reuse_port = reuse_port
        self.workers: list[Worker] = []
        self.sockets: dict[int, list[socket.socket]] = {}  # by slot (all slots: the same)
        self.addresses: list[Address] = []  # what they are bound to
        self.selector = selectors.DefaultSelector()
        self.crashes = [0] * config.processes.workers
        self.respawns: dict[int, float] = {}  # slot -> when
        self.rolling: list[int] = []  # slots left to restart
        self.stopping: float | None = None
        self.announced = False
        self.signals: list[int] = []
        self.status: int | None = None  # set: the loop ends with it
        self.exit_status = 0  # what a finished shutdown exits with (3 after a failed start)
        #: where the workers' metrics are summed (made when the fleet starts: ``run``)
        self.metrics: MetricsDirectory | None = None

    # -- starting -------------------------------------------------------------------------
    def bind(self) -> None:
        """Bind every slot's sockets. ``OSError`` if one cannot be."""
        first = bind_sockets(self.host, self.port, reuse_port=self.reuse_port)
        self.addresses = [address_of(sock) for sock in first]
        for slot in range(self.config.processes.workers):
            if slot == 0 or not self.reuse_port:
                self.sockets[slot] = first
            else:
                self.sockets[slot] = bind_again(self.addresses)

    def spawn(self, slot: int, replaces: Worker | None = None) -> Worker:
        read_end, write_end = os.pipe()
        sockets = self.sockets[slot]
        fds = [sock.fileno() for sock in sockets]
        processes = self.config.processes
        budget = processes.max_requests_per_worker
        if budget is not None and processes.max_requests_jitter:
            budget = max(1, budget - random.randint(0, processes.max_requests_jitter))
        spec = WorkerSpec(
            target=self.target,
            host=self.host,
            port=self.port,
            config=self.config,
            socket_fds=tuple(fds),
            channel_fd=write_end,
            log_level=log.getEffectiveLevel(),
            max_requests=budget,
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "trioframe._process.workers.worker"],
            stdin=subprocess.PIPE,
            pass_fds=[*fds, write_end],
            start_new_session=True,
            env=None if self.metrics is None else self.metrics.environment(),
        )
        os.close(write_end)
        assert process.stdin is not None
        with process.stdin:
            process.stdin.write(pickle.dumps(spec))
        now = time.monotonic()
        worker = Worker(slot, process, read_end, now, now, replaces=replaces)
        self.workers.append(worker)
        self.selector.register(read_end, selectors.EVENT_READ, worker)
        log.debug("worker %d started (pid %d)", slot, process.pid)
        return worker

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> int:
        """Serve until a signal; the exit status (0 drained, 1 killed, 3 startup failure)."""
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        self.selector.register(wake_read, selectors.EVENT_READ, None)
        previous_fd = signal.set_wakeup_fd(wake_write)
        handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {signum: signal.signal(signum, self._on_signal) for signum in handled}
        self.metrics = MetricsDirectory()
        try:
            for slot in range(self.config.processes.workers):
                self.spawn(slot)
            while self.status is None:
                for key, _ in self.selector.select(timeout=0.25):
                    if key.data is None:
                        os.read(wake_read, 512)
                    else:
                        self._read(key.data)
                self._handle_signals()
                self._reap()
                self._check()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            signal.set_wakeup_fd(previous_fd)
            self._kill_all()
            self.metrics.remove()
            for fd in (wake_read, wake_write):
                os.close(fd)
            for sock in {id(s): s for socks in self.sockets.values() for s in socks}.values():
                sock.close()
        return self.status

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.signals.append(signum)

    def _handle_signals(self) -> None:
        while self.signals:
            signum = self.signals.pop(0)
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                if self.stopping is None and not self.rolling:
                    log.info("SIGHUP received: restarting the workers one at a time")
                    self.rolling = sorted({w.slot for w in self._serving()})
                    self._roll_next()
            elif self.stopping is None:
                log.info("%s received: shutting down the workers", name)
                self._stop()
            else:
                log.error("second %s: killing the workers", name)
                self.status = 1

    def _read(self, worker: Worker) -> None:
        try:
            data = os.read(worker.channel, 65536)
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(worker.channel)
            os.close(worker.channel)
            worker.channel = -1
            return
        worker.buffer += data
        while b"\n" in worker.buffer:
            line, _, worker.buffer = worker.buffer.partition(b"\n")
            self._message(worker, line)
        worker.buffer = worker.buffer[-MAX_LINE:]

    def _message(self, worker: Worker, line: bytes) -> None:
        now = time.monotonic()
        worker.last_beat = now
        if line == b"ready":
            worker.ready = True
            self._ready(worker)
        elif line == b"retire" and not worker.replaced and self.stopping is None:
            log.info(
                "worker %d (pid %d) served its requests: replacing it",
                worker.slot,
                worker.process.pid,
            )
            worker.replaced = True
            self.spawn(worker.slot, replaces=worker)
        elif line.startswith(b"failed "):
            worker.failure = line[7:MAX_LINE].decode("utf-8", "replace")

    def _ready(self, worker: Worker) -> None:
        old = worker.replaces
        if old is not None:
            worker.replaces = None
            self._drain(old)
            if self.rolling and self.rolling[0] == worker.slot:
                self.rolling.pop(0)
                self._roll_next()
        if not self.announced and self.stopping is None and all(w.ready for w in self.workers):
            self.announced = True
            scheme = "http" if self.config.protocols.tls is None else "https"
            for sock in self.sockets[0]:
                log.info(
                    "trioframe serving on %s://%s (%d workers)",
                    scheme,
                    format_peer(_address(sock)),
                    self.config.processes.workers,
                )

    def _roll_next(self) -> None:
        while self.rolling:
            slot = self.rolling[0]
            current = [w for w in self._serving() if w.slot == slot]
            if current:
                current[0].replaced = True
                self.spawn(slot, replaces=current[0])
                return
            self.rolling.pop(0)  # the slot is being restarted anyway
        log.info("rolling restart done")

    def _stop(self) -> None:
        """Drain every worker; the loop ends once all have exited."""
        self.stopping = time.monotonic()
        self.respawns.clear()
        self.rolling.clear()
        for worker in self.workers:
            self._drain(worker)

    def _serving(self) -> list[Worker]:
        return [w for w in self.workers if w.ready and w.draining is None]

    def _drain(self, worker: Worker) -> None:
        if worker.draining is None and worker.process.returncode is None:
            worker.draining = time.monotonic()
            _signal(worker.process, signal.SIGTERM)

    # -- exits, heartbeats, deadlines ---------------------------------------------------------
    def _reap(self) -> None:
        for worker in [w for w in self.workers if w.process.poll() is not None]:
            if worker.channel != -1:
                self._read(worker)  # its last words (a "failed" line)
                if worker.channel != -1:
                    self.selector.unregister(worker.channel)
                    os.close(worker.channel)
            self.workers.remove(worker)
            if self.metrics is not None:  # its counters stay in the sums, its gauges go
                self.metrics.process_dead(worker.process.pid)
            self._exited(worker)
        if self.stopping is not None and not self.workers and self.status is None:
            log.info("all workers have stopped")
            self.status = self.exit_status

    def _exited(self, worker: Worker) -> None:
        code = worker.process.returncode
        pid, slot = worker.process.pid, worker.slot
        if worker.draining is not None or self.stopping is not None:
            log.debug("worker %d (pid %d) stopped (status %s)", slot, pid, code)
            return
        if any(w.replaces is worker for w in self.workers):  # its successor is starting
            log.error("worker %d (pid %d) exited with status %s", slot, pid, code)
            return
        if not worker.ready:
            reason = worker.failure or f"it exited with status {code} before serving"
            if worker.replaces is not None:  # a replacement: the old worker keeps serving
                log.error("a new worker %d failed to start: %s", slot, reason)
                worker.replaces.replaced = False
                self.rolling.clear()
                return
            if not self.announced:  # the fleet's first startup: a mistake to fix first
                log.error("startup failed in worker %d: %s", slot, reason)
                self.exit_status = 3
                self._stop()
                return
            if self.reuse_port:  # its queue would wait for it: the others take it over
                self._bind_slot_again(worker.slot)
            self._start_again(worker, f"failed to start: {reason}")
            return
        if worker.hung:
            self._start_again(worker, "stopped answering heartbeats and was killed")
        else:
            self._start_again(worker, f"exited with status {code}")

    def _bind_slot_again(self, slot: int) -> None:
        """Close ``slot``'s sockets and bind new ones that listen only once a worker has
        imported the application (see ``sockets``)."""
        for sock in self.sockets[slot]:
            sock.close()
        self.sockets[slot] = bind_again(self.addresses, listening=False)

    def _start_again(self, worker: Worker, why: str) -> None:
        """Start ``worker``'s slot again after its backoff."""
        slot = worker.slot
        now = time.monotonic()
        self.crashes[slot] = 1 if now - worker.started > STABLE_AFTER else self.crashes[slot] + 1
        delay = min(BACKOFF_FIRST * 2 ** (self.crashes[slot] - 1), BACKOFF_MAX)
        log.error(
            "worker %d (pid %d) %s; starting it again in %.1f s",
            slot,
            worker.process.pid,
            why,
            delay,
        )
        self.respawns[slot] = now + delay

    def _check(self) -> None:
        now = time.monotonic()
        for slot, due in list(self.respawns.items()):
            if now >= due and self.stopping is None:
                del self.respawns[slot]
                self.spawn(slot)
        timeout = self.config.processes.worker_heartbeat_timeout
        deadline = self.config.timeouts.shutdown_timeout + DRAIN_GRACE
        for worker in self.workers:
            if worker.process.returncode is not None:
                continue
            if worker.draining is not None:
                if now - worker.draining > deadline:
                    log.error(
                        "worker %d (pid %d) is still draining: killing it",
                        worker.slot,
                        worker.process.pid,
                    )
                    _signal(worker.process, signal.SIGKILL)
            elif self._stalled(worker, now):
                log.warning(
                    "worker %d (pid %d): no heartbeat for %g s: a new worker takes over its socket",
                    worker.slot,
                    worker.process.pid,
                    STALL_AFTER,
                )
                worker.replaced = True
                self.spawn(worker.slot, replaces=worker)
            elif now - worker.last_beat > timeout and not worker.hung:
                log.error(
                    "worker %d (pid %d): no heartbeat for %g s (its event loop is blocked): "
                    "killing it",
                    worker.slot,
                    worker.process.pid,
                    timeout,
                )
                worker.hung = True
                _signal(worker.process, signal.SIGKILL)

    def _stalled(self, worker: Worker, now: float) -> bool:
        """Whether ``worker`` (serving, with a socket of its own) has been silent long enough
        for a stand-in to take its queue over, well before its heartbeat timeout."""
        return (
            self.reuse_port
            and worker.ready
            and not worker.replaced
            and self.stopping is None
            and STALL_AFTER
            < now - worker.last_beat
            < self.config.processes.worker_heartbeat_timeout
        )

    def _kill_all(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                _signal(worker.process, signal.SIGKILL)
                worker.process.wait()
            if self.metrics is not None:
                self.metrics.process_dead(worker.process.pid)
            if worker.channel != -1:
                os.close(worker.channel)
                worker.channel = -1
        self.workers.clear()
        self.selector.close()


def _signal(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has just exited
        process.send_signal(signum)


def _address(sock: socket.socket) -> tuple[str, int]:
    name = sock.getsockname()
    return str(name[0]), int(name[1])
