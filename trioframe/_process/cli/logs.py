"""Logging for the command line: one handler on stderr for the whole process, at the
``--log-level``. Until the server reports that it is serving, an error from trioframe is a
startup failure and is written like every other failure of the command (``trioframe: ...``);
every other line, and every line after that, carries its time, level and logger."""

from __future__ import annotations

import logging

__all__ = ["StartupAwareFormatter", "configure_logging"]

#: The start of the line the server (or the worker supervisor) logs once it listens.
SERVING = "trioframe serving on"
LINE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class StartupAwareFormatter(logging.Formatter):
    """``trioframe: <message>`` for trioframe's errors before serving starts (a lifespan that
    failed, say); the timestamped format otherwise."""

    def __init__(self) -> None:
        super().__init__(LINE_FORMAT)
        self.serving = False

    def format(self, record: logging.LogRecord) -> str:
        """Format ``record``; a serving line ends the startup phase."""
        message = record.getMessage()
        if message.startswith(SERVING):
            self.serving = True
        starting_up_and_failing = (
            not self.serving
            and record.levelno >= logging.ERROR
            and record.name.split(".")[0] == "trioframe"
            and record.exc_info is None
        )
        if starting_up_and_failing:
            return f"trioframe: {message}"
        return super().format(record)


def configure_logging(level: str) -> None:
    """Send every logger's records at ``level`` and above to stderr."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h.formatter, StartupAwareFormatter)]:
        root.removeHandler(old)  # main() called again in the same process
    handler = logging.StreamHandler()
    handler.setFormatter(StartupAwareFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper())
