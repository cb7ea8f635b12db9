"""File downloads: trioframe's Response.file against Starlette's FileResponse on Uvicorn and
on Hypercorn (trio worker), by throughput and by server CPU per MiB.

Each server runs pinned to CPU 0; the client (this process, raw sockets, one keep-alive
connection, ``recv_into`` a reused buffer so it costs little) runs on CPU 1. For each file
size the client downloads the file ``--count`` times in a row, ``--rounds`` rounds with the
servers in alternating order; medians. Server CPU is read from ``/proc/PID/stat``.

Usage: python bench/files.py [--rounds 3] [--only trioframe,uvicorn,hypercorn]
(needs bench/requirements.txt; Linux: taskset, /proc). Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SIZES = {"1 MiB": (1 << 20, 200), "100 MiB": (100 << 20, 6)}  # size, downloads a round
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def command(server: str, port: int, directory: Path) -> list[str]:
    if server == "trioframe":
        return [PY, str(ROOT / "bench/apps/files_app.py"), str(port), str(directory)]
    app = "bench.apps.files_app:starlette_app"
    if server == "uvicorn":
        return [PY, "-m", "uvicorn", app, "--port", str(port), "--log-level", "warning"]
    return [PY, "-m", "hypercorn", "-k", "trio", "-b", f"127.0.0.1:{port}", app]


def start(server: str, directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "FILES_DIR": str(directory), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        ["taskset", "-c", "0", *command(server, port, directory)], env=env, cwd=ROOT
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{server} did not start")


def cpu_seconds(pid: int) -> float:
    """User and system CPU of ``pid`` and its child processes (Hypercorn serves from a
    worker process it spawns)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:  # fields[1]: the parent's pid
            total += int(fields[11]) + int(fields[12])
    return total / TICK


def download(sock: socket.socket, name: str, size: int, buffer: bytearray) -> None:
    sock.sendall(f"GET /f/{name} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    view = memoryview(buffer)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        head += chunk
    head, _, rest = head.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"unexpected answer: {head[:80]!r}")
    left = size - len(rest)
    while left > 0:
        received = sock.recv_into(view, min(left, len(buffer)))
        if not received:
            raise SystemExit("the server closed the connection mid-file")
        left -= received


def measure(
    server: str, port: int, pid: int, name: str, size: int, count: int
) -> tuple[float, float]:
    """(MiB/s, server CPU ms per MiB) for ``count`` downloads of ``name``."""
    buffer = bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        download(sock, name, size, buffer)  # warm-up: page cache, code paths
        cpu = cpu_seconds(pid)
        started = time.perf_counter()
        for _ in range(count):
            download(sock, name, size, buffer)
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(pid) - cpu
    mib = size * count / (1 << 20)
    return mib / elapsed, cpu * 1000 / mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="trioframe,uvicorn,hypercorn")
    args = parser.parse_args()
    servers = args.only.split(",")
    os.sched_setaffinity(0, {1})
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for label, (size, _) in SIZES.items():
            (directory / label.replace(" ", "")).write_bytes(os.urandom(size))
        running = {server: start(server, directory) for server in servers}
        try:
            for round_number in range(args.rounds):
                order = servers if round_number % 2 == 0 else servers[::-1]
                for label, (size, count) in SIZES.items():
                    for server in order:
                        process, port = running[server]
                        figure = measure(
                            server, port, process.pid, label.replace(" ", ""), size, count
                        )
                        results.setdefault((label, server), []).append(figure)
                        print(
                            f"[{server}] round {round_number + 1} {label}: {figure[0]:,.0f} MiB/s, {figure[1]:.2f} ms CPU/MiB",
                            flush=True,
                        )
        finally:
            for process, _ in running.values():
                process.terminate()
                process.wait(10)
    print(
        f"\n{args.rounds} rounds, medians; servers on CPU 0, client on CPU 1, one keep-alive connection"
    )
    print(f"{'file':<9}{'server':<11}{'MiB/s':>9}{'CPU ms/MiB':>12}{'x uvicorn':>11}")
    for label in SIZES:
        base = statistics.median(r[0] for r in results.get((label, "uvicorn"), [(float("nan"), 0)]))
        for server in servers:
            rate = statistics.median(r[0] for r in results[label, server])
            cpu = statistics.median(r[1] for r in results[label, server])
            print(f"{label:<9}{server:<11}{rate:>9,.0f}{cpu:>12.2f}{rate / base:>11.2f}")


if __name__ == "__main__":
    main()
