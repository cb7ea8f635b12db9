"""``python -m trioframe run MODULE:ATTR``."""

from __future__ import annotations

import pathlib
import signal
import socket
import subprocess
import sys

import httpx
import pytest
import trio

from trioframe.__main__ import load_router, main

ROOT = pathlib.Path(__file__).parents[1]


def test_load_router_accepts_module_attr() -> None:
    sys.path.insert(0, str(ROOT))
    router = load_router("examples.hello:router")
    assert router.__class__.__name__ == "Router"


@pytest.mark.parametrize("target", ["examples.hello", "examples.hello:nothing", ":router"])
def test_bad_targets_exit_with_a_message(target: str) -> None:
    sys.path.insert(0, str(ROOT))
    with pytest.raises(SystemExit) as info:
        load_router(target)
    assert "trioframe:" in str(info.value)


def test_unimplemented_flags_are_refused_clearly() -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "examples.hello:router", "--http2"])
    assert "--http2 is not available" in str(info.value)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.loopback
async def test_cli_serves_and_exits_zero_on_sigterm() -> None:
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trioframe", "run", "examples.hello:router", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(10):
            while True:
                try:
                    await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await trio.sleep(0.05)
            with httpx.Client() as client:
                response = await trio.to_thread.run_sync(
                    client.get, f"http://127.0.0.1:{port}/users/1"
                )
            assert response.json() == {"id": 1, "name": "Ada"}
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
