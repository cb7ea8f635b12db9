"""The processes ring: trioframe as a whole process, above the server (nothing below imports
it).

``run.py`` is what ``Server.run()`` does (registered with the server as its process entry when
this package is imported), ``signals.py`` the signal handling of a serving process,
``workers/`` the supervisor and its worker processes, ``cli/`` the command line; ``load.py``
finds the router a target names and ``errors.py`` says how startup failed.
"""

from __future__ import annotations

from .._server.serve import register_process_entry
from .run import run_server

__all__ = ["run_server"]

register_process_entry(run_server)
