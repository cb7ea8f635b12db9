"""Running an example as ``python examples/<name>.py`` would, ``__main__`` block and all, for
the tests that check the script itself (serving, SIGINT)."""

from __future__ import annotations

import pathlib
import socket
import subprocess
import sys

import trio

__all__ = ["start_example"]

# The address the example asks for, 127.0.0.1:3000, is checked and swapped for a free port, so
# the test neither depends on port 3000 being free nor leaves connections in TIME_WAIT there.
LAUNCHER = """
import runpy, sys, trioframe
real_server = trioframe.Server
def server(router, addr, *args, **kwargs):
    assert addr == "127.0.0.1:3000", addr
    return real_server(router, ("127.0.0.1", int(sys.argv[2])), *args, **kwargs)
trioframe.Server = server
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def start_example(example: pathlib.Path) -> tuple[trio.Process, int]:
    """Start the example as a script; return once it accepts connections."""
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", LAUNCHER, str(example), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            assert process.poll() is None, "the example exited early"
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                await trio.sleep(0.05)
                continue
            await stream.aclose()
            return process, port
    except BaseException:
        process.kill()
        await process.wait()
        raise
