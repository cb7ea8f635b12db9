"""Worker processes: requests/s with 1, 2 and 4 workers, trioframe (SO_REUSEPORT sockets, and
one shared socket) against Uvicorn ``--workers`` with the same one-line app, and how the
requests spread over the workers.

wrk (one thread, 64 keep-alive connections, which it opens at the start: the spread is decided
when they are accepted) counts the answers by the pid in each body (bench/workers.lua). Rounds
alternate the servers; medians of requests/s; the spread is the largest worker's share in the
median round. On this 2-core machine the load generator shares the cores with the servers, so
expect about 2x from 1 to 2 workers at best, and nothing more from 4.

Usage: python bench/workers.py [--rounds 3] [--duration 5] [--only trioframe,uvicorn]
(needs wrk and bench/requirements.txt). Binds 127.0.0.1 only; every server is stopped.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
COUNTS = (1, 2, 4)
SERVERS = ("trioframe", "trioframe-shared", "uvicorn")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def command(server: str, port: int, workers: int) -> list[str]:
    if server.startswith("trioframe"):
        mode = ["shared"] if server == "trioframe-shared" else []
        return [PY, str(ROOT / "bench/apps/workers_app.py"), str(port), str(workers), *mode]
    return [
        PY, "-m", "uvicorn", "bench.apps.workers_app:starlette_app", "--port", str(port),
        "--workers", str(workers), "--log-level", "warning",
    ]  # fmt: skip


def start(server: str, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command(server, port, workers), env=env, cwd=ROOT, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # every worker answers before the load starts
        seen = set()
        try:
            for _ in range(workers * 20):
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
                    seen.add(sock.recv(4096).rsplit(b"\r\n\r\n", 1)[-1])
            if len(seen) >= workers:
                time.sleep(0.5)
                return process, port
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{server} with {workers} workers did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def load(port: int, duration: int) -> tuple[float, list[int]]:
    """Requests/s and the requests each worker answered."""
    out = subprocess.run(
        ["wrk", "-t1", "-c64", f"-d{duration}s", "-s", str(ROOT / "bench/workers.lua"),
         f"http://127.0.0.1:{port}/"],
        capture_output=True, text=True, check=True, timeout=duration + 30,
    ).stdout  # fmt: skip
    rate = float(next(line for line in out.splitlines() if "Requests/sec" in line).split()[1])
    result = next(line for line in out.splitlines() if line.startswith("WORKERS_RESULT"))
    counts = [int(part.split("=")[1]) for part in result.split()[1].split(",") if part]
    return rate, sorted(counts, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--only", default=",".join(SERVERS))
    args = parser.parse_args()
    servers = [s for s in SERVERS if s in args.only.split(",")]
    results: dict[tuple[str, int], list[tuple[float, list[int]]]] = {}
    for round_ in range(args.rounds):
        order = servers if round_ % 2 == 0 else servers[::-1]
        for workers in COUNTS:
            for server in order:
                process, port = start(server, workers)
                try:
                    results.setdefault((server, workers), []).append(load(port, args.duration))
                finally:
                    stop(process)
    print(f"{'server':<18}{'workers':>8}{'req/s (median)':>16}{'vs 1 worker':>13}  spread")
    for server in servers:
        base = statistics.median(rate for rate, _ in results[(server, 1)])
        for workers in COUNTS:
            runs = sorted(results[(server, workers)], key=lambda run: run[0])
            rate, counts = runs[len(runs) // 2]
            shares = "/".join(f"{100 * n / sum(counts):.0f}%" for n in counts)
            print(f"{server:<18}{workers:>8}{rate:>16,.0f}{rate / base:>12.2f}x  {shares}")


if __name__ == "__main__":
    main()
