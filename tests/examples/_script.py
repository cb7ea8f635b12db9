"""Running an example as ``python examples/<name>.py`` would, ``__main__`` block and all, for
the tests that check the script itself (serving, SIGINT)."""

from __future__ import annotations

import os
import pathlib
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

__all__ = ["running_example"]

# The example takes its port from the PORT environment variable (host 127.0.0.1): the test
# gives it a free one, so it neither depends on port 3000 being free nor leaves connections in
# TIME_WAIT there. The server's "trioframe serving on" log line, written once it listens, is
# copied to stdout after READY: the test waits for that line instead of retrying connections,
# and checks that it names 127.0.0.1 and the port it gave.
LAUNCHER = """
import logging, runpy, sys
class Ready(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        if message.startswith("trioframe serving on"):
            print("READY", message, flush=True)
logging.getLogger("trioframe").addHandler(Ready())
logging.getLogger("trioframe").setLevel(logging.INFO)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@asynccontextmanager
async def running_example(example: pathlib.Path) -> AsyncIterator[tuple[trio.Process, int]]:
    """Start the example as a script and yield it and its port once it listens (bound by the
    caller's deadline); kill it on the way out if it is still running."""
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", LAUNCHER, str(example)],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        output = b""
        while (ready := re.search(rb"READY ([^\n]*)\n", output)) is None:
            chunk = await process.stdout.receive_some()
            assert chunk, f"the example exited before it listened: {output!r}"
            output += chunk
        assert ready[1] == f"trioframe serving on http://127.0.0.1:{port}".encode(), ready[1]
        yield process, port
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
