"""``trioframe run`` serving for real over loopback: a router or a factory, the port from
``--port`` or ``$PORT``, HTTPS, and a graceful exit with status 0 on SIGINT or SIGTERM."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import httpx
import pytest
import trio

from ._cli import free_port, serving, write_module

pytestmark = pytest.mark.loopback

FACTORY_APP = """
from trioframe import Response, Router


def create_app() -> Router:
    async def hello() -> Response:
        return Response.text("made by the factory")

    return Router().get("/", hello)
"""


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(url)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_a_router_serves_and_a_signal_exits_0(stop: signal.Signals) -> None:
    with trio.fail_after(15):
        async with serving("run", "examples.hello:router", "--port", "0") as server:
            response = await _get(f"http://127.0.0.1:{server.port}/users/1")
            assert response.json() == {"id": 1, "name": "Ada"}
            server.process.send_signal(stop)
            assert await server.finish() == 0
    assert b"Traceback" not in server.log


async def test_a_factory_returning_a_router_serves(tmp_path: Path) -> None:
    write_module(tmp_path, "factory_app", FACTORY_APP)
    with trio.fail_after(15):
        async with serving("run", "factory_app:create_app", "--port", "0", cwd=tmp_path) as server:
            response = await _get(f"http://127.0.0.1:{server.port}/")
            assert response.text == "made by the factory"
            server.process.send_signal(signal.SIGINT)
            assert await server.finish() == 0


async def test_the_port_environment_variable_is_used_without_port() -> None:
    port = free_port()
    with trio.fail_after(15):
        async with serving("run", "examples.hello:router", env={"PORT": str(port)}) as server:
            assert server.port == port
            assert (await _get(f"http://127.0.0.1:{port}/")).text == "Hello from trioframe!"
            server.process.send_signal(signal.SIGINT)
            assert await server.finish() == 0


async def _serve_over_tls(flags: list[str], ca_file: str | None) -> None:
    with trio.fail_after(20):
        async with serving("run", "examples.hello:router", "--port", "0", *flags) as server:
            if ca_file is None:  # --self-signed: the log says which CA file to trust
                found = await server.read_log_until(re.compile(rb"--cacert (\S+\.pem)"))
                ca_file = found[1].decode()
            url = f"https://localhost:{server.port}/users/1"
            done = await trio.run_process(
                ["curl", "-sS", "--cacert", ca_file, url], capture_stdout=True
            )
            assert json.loads(done.stdout) == {"id": 1, "name": "Ada"}
            server.process.send_signal(signal.SIGTERM)
            assert await server.finish() == 0


async def test_https_with_tls_cert_and_tls_key(tmp_path: Path) -> None:
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    issued = ca.issue_cert("localhost")
    issued.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    issued.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    flags = ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    await _serve_over_tls(flags, str(tmp_path / "ca.pem"))


async def test_https_with_self_signed() -> None:
    await _serve_over_tls(["--self-signed"], None)
