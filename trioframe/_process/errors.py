"""How a process fails to start: ``StartupFailure`` carries the one line the command line
prints on stderr and the exit status; ``describe`` turns an exception from the user's code into
that line's tail; ``lifespan_failure`` says in one line why a lifespan did not enter."""

from __future__ import annotations

import os
import site
import sysconfig
import traceback
from pathlib import Path

from .._errors import ConfigurationError

__all__ = ["STARTUP", "USAGE", "StartupFailure", "describe", "lifespan_failure"]

#: Exit status for a command line that cannot work as written (flags, target, module, name).
USAGE = 2
#: Exit status for a server that could not start (or stopped on an unexpected error).
STARTUP = 3

#: Code that is not the user's: the standard library, installed packages, trioframe itself.
_NOT_YOURS = tuple(
    str(Path(directory).resolve()) + os.sep
    for directory in {
        *(sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")),
        *site.getsitepackages(),
        str(Path(__file__).parents[1]),
    }
)


class StartupFailure(Exception):
    """The command cannot go on: ``str(failure)`` is the message (printed after
    ``trioframe: ``) and ``status`` the exit status."""

    def __init__(self, message: str, status: int = STARTUP) -> None:
        super().__init__(message)
        self.status = status


def describe(error: BaseException) -> str:
    """``Type: message (file.py, line N)``: the exception and where in the user's code it
    happened (the innermost frame outside the standard library, installed packages and
    trioframe; a ``SyntaxError`` names its own place)."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if isinstance(error, SyntaxError):
        return text
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<")
    ]
    yours = [frame for frame in frames if not _resolved(frame.filename).startswith(_NOT_YOURS)]
    if not (yours or frames):
        return text
    frame = (yours or frames)[-1]
    return f"{text} ({_shown(frame.filename)}, line {frame.lineno})"


def lifespan_failure(name: str, error: BaseException) -> str:
    """What went wrong when the lifespan ``name`` raised ``error`` while entering, in one
    line (a ``ConfigurationError`` names the lifespan itself)."""
    if isinstance(error, ConfigurationError):
        return str(error)
    return f"the lifespan {name} raised {type(error).__name__}: {error}"


def _resolved(filename: str) -> str:
    return str(Path(filename).resolve())


def _shown(filename: str) -> str:
    """The file relative to the current directory when it is under it."""
    path = Path(_resolved(filename))
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
