"""``trioframe run --reload``: a change to a watched .py file restarts the server with the new
code; a module that fails to import does not end the reloader, and the next fix serves again;
SIGINT stops the server gracefully, the reloader exits 0 and no server process is left."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import httpx
import pytest
import trio

from ._cli import Server, free_port, run_cli, serving, write_module

pytest.importorskip("watchfiles", reason="--reload needs watchfiles (the reload extra)")
pytestmark = pytest.mark.loopback

SERVER_PIDS = re.compile(rb"restarted the server \(pid (\d+)\)|started the server \(pid (\d+)\)")


def _app(text: str) -> str:
    return f"""
from trioframe import Response, Router


async def hello() -> Response:
    return Response.text({text!r})


router = Router().get("/", hello)
"""


async def _wait_for_text(port: int, text: str, within: float = 15) -> None:
    """Poll GET / until it answers ``text`` (connection errors while restarting are fine)."""
    answered = None
    with trio.move_on_after(within):
        while answered != text:
            try:
                async with httpx.AsyncClient() as client:
                    answered = (await client.get(f"http://127.0.0.1:{port}/")).text
            except httpx.TransportError:
                pass
            await trio.sleep(0.1)
    assert answered == text, f"still {answered!r} after {within} s"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _stop_and_check_nothing_is_left(server: Server) -> None:
    server.process.send_signal(signal.SIGINT)
    assert await server.finish() == 0, server.log.decode()
    pids = [int(a or b) for a, b in SERVER_PIDS.findall(server.log)]
    assert pids, server.log.decode()
    assert not [pid for pid in pids if _alive(pid)], server.log.decode()


async def test_a_changed_module_is_served_after_a_restart(tmp_path: Path) -> None:
    module = write_module(tmp_path, "app", _app("v1"))
    port = free_port()
    flags = ["--reload", "--reload-dir", str(tmp_path), "--port", str(port)]
    with trio.fail_after(60):
        async with serving("run", "app:router", *flags, cwd=tmp_path) as server:
            await _wait_for_text(port, "v1")
            module.write_text(_app("v2"))
            await _wait_for_text(port, "v2")
            await server.read_log_until(re.compile(rb"app\.py changed: restarted the server"))
            await _stop_and_check_nothing_is_left(server)


async def test_a_syntax_error_waits_for_the_fix(tmp_path: Path) -> None:
    module = write_module(tmp_path, "app", _app("v1"))
    port = free_port()
    flags = ["--reload", "--reload-dir", str(tmp_path), "--port", str(port)]
    with trio.fail_after(60):
        async with serving("run", "app:router", *flags, cwd=tmp_path) as server:
            await _wait_for_text(port, "v1")
            module.write_text("def broken(:\n")
            exited = re.compile(rb"exited with status 3; waiting for a change")
            await server.read_log_until(exited)
            assert b"SyntaxError" in server.log
            assert server.process.returncode is None  # the reloader is still there
            module.write_text(_app("v3"))
            await _wait_for_text(port, "v3")
            await _stop_and_check_nothing_is_left(server)


def test_a_command_line_that_names_nothing_ends_the_reloader(tmp_path: Path) -> None:
    """A first server that exits with status 2 (a usage error) ends the reloader: no edit
    to a file would fix the command line."""
    write_module(tmp_path, "app", _app("v1"))
    done = run_cli("run", "app:routr", "--reload", "--port", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert "has no attribute 'routr'" in done.stderr
