"""``python -m trioframe run MODULE:ATTR``."""

from __future__ import annotations

import json
import pathlib
import re
import signal
import socket
import subprocess
import sys

import httpx
import pytest
import trio

from trioframe.__main__ import _config, _parser, load_router, main

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
        main(["run", "examples.hello:router", "--workers", "2"])
    assert "--workers above 1 is not available" in str(info.value)


def test_http2_flag_enables_http2() -> None:
    args = _parser().parse_args(["run", "examples.hello:router", "--http2"])
    assert _config(args).http2 is True
    assert _config(_parser().parse_args(["run", "examples.hello:router"])).http2 is False


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


@pytest.mark.parametrize(
    "flags",
    [["--tls-cert", "c.pem"], ["--tls-key", "k.pem"], ["--self-signed", "--tls-cert", "c.pem"]],
)
def test_tls_flags_that_do_not_go_together_exit_2(flags: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "examples.hello:router", *flags])
    assert "trioframe: " in str(info.value)


def test_a_tls_certificate_that_cannot_be_loaded_exits_3(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.pem")
    status = main(["run", "examples.hello:router", "--tls-cert", missing, "--tls-key", missing])
    assert status == 3
    assert "cannot load the TLS certificate or key" in capsys.readouterr().err


async def _read_until(stream: trio.abc.ReceiveStream, pattern: bytes, seen: bytearray) -> bytes:
    """Read the process's output into ``seen`` until ``pattern`` (a regex) matches; the match."""
    while (found := re.search(pattern, seen)) is None:
        chunk = await stream.receive_some(4096)
        assert chunk, f"output ended before {pattern!r}: {bytes(seen)!r}"
        seen += chunk
    return found[0]


async def _serve_cli_over_tls(flags: list[str], ca_file: str | None) -> None:
    port = _free_port()
    command = [sys.executable, "-m", "trioframe", "run", "examples.hello:router"]
    process = await trio.lowlevel.open_process(
        [*command, "--port", str(port), *flags],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    seen = bytearray()
    try:
        with trio.fail_after(15):
            if ca_file is None:  # --self-signed: the log says which CA file to trust
                line = await _read_until(process.stdout, rb"--cacert \S+\.pem", seen)
                ca_file = line.split()[-1].decode()
            await _read_until(process.stdout, rb"serving on https://", seen)
            done = await trio.run_process(
                ["curl", "-sS", "--cacert", ca_file, f"https://localhost:{port}/users/1"],
                capture_stdout=True,
            )
            assert json.loads(done.stdout) == {"id": 1, "name": "Ada"}
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.loopback
async def test_cli_serves_https_with_tls_cert_and_tls_key(tmp_path: pathlib.Path) -> None:
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    issued = ca.issue_cert("localhost")
    issued.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    issued.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    flags = ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    await _serve_cli_over_tls(flags, str(tmp_path / "ca.pem"))


@pytest.mark.loopback
async def test_cli_serves_https_with_self_signed() -> None:
    await _serve_cli_over_tls(["--self-signed"], None)
