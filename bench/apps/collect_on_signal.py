"""Run a benchmark app, with a full garbage collection whenever the process gets SIGUSR1.

Usage: python bench/apps/collect_on_signal.py APP [ARGUMENTS...]
(APP, a script such as ``apps/trioframe_app.py``, runs as ``__main__`` with ARGUMENTS.)

bench/instructions_streams.py starts its servers this way and signals one before each count:
a full collection walks the whole heap (about 15 million instructions in the HTTP/2 server)
and comes every few thousand requests, so without it one count in several would hold one and
its neighbours none.
"""

from __future__ import annotations

import gc
import runpy
import signal
import sys
from types import FrameType


def collect(signum: int, frame: FrameType | None) -> None:
    gc.collect()


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, collect)
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
