"""Naming a router so that another process can import it again: ``"MODULE:ATTR"`` or
``"path/to/file.py:ATTR"``. Worker processes are spawned, not forked (trio cannot fork once its
loop runs), so each one imports the application itself."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from ..._errors import ConfigurationError
from ..._routing.router import Router
from ..errors import USAGE, StartupFailure, describe
from ..load import load_router, router_of

__all__ = ["import_router", "target_of"]

#: The ``__name__`` a script is run under in a worker: not ``"__main__"``, so the script's own
#: ``if __name__ == "__main__":`` block (which started the supervisor) does not run again.
WORKER_MAIN = "__trioframe_worker__"


def import_router(target: str) -> Router:
    """The router ``target`` names, found as the command line finds it (``ATTR`` may be a
    factory). A script (``file.py:ATTR``) is run under another ``__name__``. Raises
    ``StartupFailure`` with one line saying what is wrong, or what importing raised."""
    where, _, attr = target.rpartition(":")
    if not where.endswith(".py"):
        return load_router(target)
    try:
        namespace = runpy.run_path(where, run_name=WORKER_MAIN)
    except Exception as error:
        raise StartupFailure(f"running {where} raised {describe(error)}") from None
    if attr not in namespace:
        raise StartupFailure(f"{where} has no attribute {attr!r}", USAGE)
    return router_of(target, namespace[attr])


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
