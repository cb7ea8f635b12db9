"""Naming a router so that another process can import it again: ``"MODULE:ATTR"`` or
``"path/to/file.py:ATTR"``. Worker processes are spawned, not forked (trio cannot fork once its
loop runs), so each one imports the application itself."""

from __future__ import annotations

import importlib
import runpy
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigurationError
from .._routing.router import Router

__all__ = ["import_router", "target_of"]

#: The ``__name__`` a script is run under in a worker: not ``"__main__"``, so the script's own
#: ``if __name__ == "__main__":`` block (which started the supervisor) does not run again.
WORKER_MAIN = "__trioframe_worker__"


def import_router(target: str) -> Router:
    """The router ``target`` names. ``ATTR`` may be a ``Router`` or a zero-argument callable
    returning one. Raises ``ImportError``/``AttributeError`` when it cannot be found (and
    whatever importing the module or calling the factory raises), ``ConfigurationError``
    when the value is not a router."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise ConfigurationError(f"expected MODULE:ATTR, got {target!r}")
    namespace: Any
    if where.endswith(".py"):
        namespace = runpy.run_path(where, run_name=WORKER_MAIN)
        value = namespace.get(attr)
        if value is None:
            raise AttributeError(f"{where} has no attribute {attr!r}")
    else:
        if "" not in sys.path and "." not in sys.path:
            sys.path.insert(0, "")  # MODULE resolves from the current directory, as python -m
        value = getattr(importlib.import_module(where), attr)
    if callable(value) and not isinstance(value, Router):
        value = value()
    if not isinstance(value, Router):
        raise ConfigurationError(f"{target} is a {type(value).__name__}, not a Router")
    return value


def target_of(router: Router) -> str:
    """A target that imports ``router`` again: its module-level name in the script being run
    (``__main__``, named by its file), else in a module that holds it."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is not None:
        for name, value in vars(main).items():
            if value is router:
                return f"{Path(path).resolve()}:{name}"
    for module_name, module in list(sys.modules.items()):
        if module is main or module_name.startswith("_"):
            continue
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is router:
                return f"{module_name}:{name}"
    raise ConfigurationError(
        "workers > 1: the router must be a module-level name (each worker process imports "
        "it again); or run it with: trioframe run MODULE:ATTR --workers N"
    )
