"""Running an example as ``python examples/<name>.py`` would, ``__main__`` block and all, for
the tests that check the script itself (serving, SIGINT)."""

from __future__ import annotations

import pathlib
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

__all__ = ["running_example"]

# The address the example asks for, 127.0.0.1:3000, is checked and swapped for a free port, so
# the test neither depends on port 3000 being free nor leaves connections in TIME_WAIT there.
# The server's "trioframe serving on" log line, written once it listens, is copied to stdout
# as READY: the test waits for that line instead of retrying connections.
LAUNCHER = """
import logging, runpy, sys, trioframe
real_server = trioframe.Server
def server(router, addr, *args, **kwargs):
    assert addr == "127.0.0.1:3000", addr
    return real_server(router, ("127.0.0.1", int(sys.argv[2])), *args, **kwargs)
trioframe.Server = server
class Ready(logging.Handler):
    def emit(self, record):
        if record.getMessage().startswith("trioframe serving on"):
            print("READY", flush=True)
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
        [sys.executable, "-c", LAUNCHER, str(example), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        output = b""
        while b"READY\n" not in output:
            chunk = await process.stdout.receive_some()
            assert chunk, f"the example exited before it listened: {output!r}"
            output += chunk
        yield process, port
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
