"""``trioframe run --reload``: serve from a child process and start a new one whenever a
``.py`` file under the watched directories changes. For development only.

The parent runs no trio loop and never imports the application: it starts
``python -m trioframe run ...`` (the same options, without ``--reload``), watches the files
with watchfiles (the ``reload`` extra), and on a change stops the child gracefully (SIGTERM,
then SIGKILL once the server's own shutdown grace has passed) and starts another. A child that
exits by itself (an application that fails at startup, say) is not restarted until the next
change. SIGINT, SIGTERM and SIGHUP stop the child the same way and the parent exits 0 (1 when
the child had to be killed); a second signal kills the child at once.

The child shares the parent's terminal and process group, so ``breakpoint()`` in a handler
works. Ctrl-C in that terminal reaches both processes: the parent then only waits for the child
instead of signalling it a second time (which would make it exit without its grace period).
The child also holds the read end of a pipe from the parent: if the parent dies without
stopping it (``kill -9``), the child shuts itself down.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import FrameType

from ..errors import USAGE, StartupFailure

__all__ = ["RELOADER_PIPE", "Reloader", "require_watchfiles", "stop_with_reloader"]

log = logging.getLogger("trioframe.reload")

#: The environment variable naming the child's end of the lifeline pipe.
RELOADER_PIPE = "TRIOFRAME_RELOADER_PIPE"
#: After the server's ``shutdown_timeout``: its final grace, its hard-exit grace, and a margin.
KILL_MARGIN = 3.0
#: How often the watcher wakes up (milliseconds) to notice a child that exited.
POLL_MS = 500
_STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def require_watchfiles() -> None:
    """Fail with status 2 and the install command when watchfiles is missing."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        raise StartupFailure(
            "--reload needs the reload extra: pip install 'trioframe[reload]'", USAGE
        ) from None


class Reloader:
    """Runs ``command`` as a child process, restarting it when a watched file changes."""

    def __init__(self, command: Sequence[str], directories: Iterable[str], grace: float) -> None:
        self.command = list(command)
        self.directories = [str(Path(d).resolve()) for d in directories]
        self.grace = grace
        self.child: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._lifeline: int | None = None  # the write end of the child's pipe
        self._exit_noticed = False
        self._stop = threading.Event()
        self._signals = 0
        self._child_signalled = False  # the terminal sent the child the same SIGINT

    def run(self) -> int:
        """Serve until a stopping signal; the exit status (0, or 1 when the child had to be
        killed; 2 when the first child found the command line wrong)."""
        import watchfiles

        if log.getEffectiveLevel() > logging.DEBUG:
            logging.getLogger("watchfiles").setLevel(logging.WARNING)
        previous = {signum: signal.signal(signum, self._on_signal) for signum in _STOPPING_SIGNALS}
        try:
            self._start()
            log.info(
                "started the server (pid %d); restarting it when a .py file under %s changes",
                self._pid(),
                ", ".join(self.directories),
            )
            for changes in watchfiles.watch(
                *self.directories,
                watch_filter=watchfiles.PythonFilter(),
                stop_event=self._stop,
                rust_timeout=POLL_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if changes:
                    self._restart({path for _change, path in changes})
                elif (status := self._exit_status()) is None:
                    continue
                elif status == USAGE and self.starts == 1:
                    return USAGE  # the command line itself is wrong: no edit will fix it
                else:
                    log.info(
                        "the server exited with status %d; waiting for a change to restart it",
                        status,
                    )
            return 1 if self._stop_child() else 0
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._close_lifeline()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._signals += 1
        if signum == signal.SIGINT and self._signals == 1 and _terminal_foreground():
            self._child_signalled = True
        self._stop.set()

    def _start(self) -> None:
        read_end, self._lifeline = os.pipe()
        environment = {**os.environ, RELOADER_PIPE: str(read_end)}
        # Never a stale .pyc: a file rewritten within the same second at the same size would
        # otherwise look unchanged to the import system.
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        try:
            self.child = subprocess.Popen(self.command, env=environment, pass_fds=(read_end,))
        finally:
            os.close(read_end)
        self.starts += 1
        self._exit_noticed = False

    def _restart(self, paths: set[str]) -> None:
        self._stop_child()
        if self._stop.is_set():
            return  # a stopping signal came while the old child was stopping
        self._start()
        log.info("%s changed: restarted the server (pid %d)", _names(paths), self._pid())

    def _exit_status(self) -> int | None:
        """The status of a child that has exited by itself since the last call, else
        ``None``."""
        if self.child is None or self.child.poll() is None or self._exit_noticed:
            return None
        self._exit_noticed = True
        self._close_lifeline()
        return self.child.returncode

    def _stop_child(self) -> bool:
        """Stop the child gracefully; whether it had to be killed or forced itself out."""
        child, self.child = self.child, None
        if child is None or child.poll() is not None:
            self._close_lifeline()
            return False
        if not self._child_signalled:
            child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        while child.poll() is None and time.monotonic() < deadline and self._signals < 2:
            time.sleep(0.05)
        killed = child.poll() is None
        if killed:
            log.warning("the server (pid %d) is still running: killing it", child.pid)
            child.kill()
        status = child.wait()
        self._close_lifeline()
        return killed or status == 1

    def _pid(self) -> int:
        return -1 if self.child is None else self.child.pid

    def _close_lifeline(self) -> None:
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None


def _terminal_foreground() -> bool:
    """Whether this process is in the foreground process group of its terminal: then a
    SIGINT most likely came from Ctrl-C, which the terminal sends to the child too."""
    for fd in (0, 1, 2):
        try:
            return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


def _names(paths: set[str], shown: int = 3) -> str:
    cwd = Path.cwd()
    names = []
    for path in sorted(paths):
        try:
            names.append(str(Path(path).relative_to(cwd)))
        except ValueError:
            names.append(path)
    if len(names) > shown:
        return f"{', '.join(names[:shown])} and {len(names) - shown} more"
    return ", ".join(names)


def stop_with_reloader() -> None:
    """In a child of the reloader: shut down gracefully (SIGTERM to this process) when the
    reloader goes away without stopping it. Does nothing in any other process."""
    fd = os.environ.pop(RELOADER_PIPE, None)
    if fd is None or not fd.isdigit():
        return

    def wait_for_the_reloader() -> None:
        try:
            while os.read(int(fd), 1):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait_for_the_reloader, name="trioframe-reloader", daemon=True).start()


def python_command(arguments: Sequence[str]) -> list[str]:
    """``python -m trioframe <arguments>`` with this interpreter."""
    return [sys.executable, "-m", "trioframe", *arguments]
