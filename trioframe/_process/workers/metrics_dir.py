"""The worker fleet's directory for prometheus_client's multiprocess mode.

Every worker of a fleet writes its metrics to files in one directory, named to each worker
in ``PROMETHEUS_MULTIPROC_DIR`` before it imports the application (prometheus_client chooses
its mode when it is first imported), so that a scrape answered by any worker sums the whole
fleet (``_metrics.prometheus``). The supervisor makes a fresh temporary directory per fleet
and removes it when the fleet has stopped, unless the variable is already set (the directory
is then the user's: kept, and theirs to empty between runs). When a worker exits, its live
gauges (requests in progress, open connections and sessions) are dropped and its counters
kept: ``prometheus_client.multiprocess.mark_process_dead``. Harmless for an application
without metrics, or without prometheus_client: nothing is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

__all__ = ["VARIABLE", "MetricsDirectory"]

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
_LEGACY = "prometheus_multiproc_dir"  # (what prometheus_client read before the upper case)


class MetricsDirectory:
    """The fleet's multiprocess directory: the user's, or a temporary one of its own."""

    def __init__(self) -> None:
        given = os.environ.get(VARIABLE) or os.environ.get(_LEGACY)
        #: whether the directory is this fleet's own (made now, removed by ``remove``)
        self.owned = not given
        self.path = given or tempfile.mkdtemp(prefix="trioframe-metrics-")

    def environment(self) -> dict[str, str]:
        """The environment a worker starts with: this process's, naming the directory."""
        return {**os.environ, VARIABLE: self.path}

    def process_dead(self, pid: int) -> None:
        """The worker ``pid`` has exited: its live gauges no longer count, its counters do."""
        try:
            from prometheus_client.multiprocess import mark_process_dead
        except ImportError:  # no metrics without it: nothing was written
            return
        with contextlib.suppress(OSError):
            mark_process_dead(pid, self.path)  # type: ignore[no-untyped-call]

    def remove(self) -> None:
        """The fleet has stopped: remove the directory if it is the fleet's own."""
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)
