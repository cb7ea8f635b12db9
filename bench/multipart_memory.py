"""Multipart memory: how much a large upload saved with ``save_to_file`` grows the server's
peak RSS. Target: under 20 MiB for a 100 MiB file.

    python bench/multipart_memory.py [--size-mib 100] [--piece-kib 1024] [--runs 3]

The server is ``tests/multipart/memory_app.py`` (the same app ``tests/multipart/
test_memory.py`` measures), started as its own process on 127.0.0.1. Each run sends one
``multipart/form-data`` POST with a single file field over a loopback socket, in pieces made
on the fly, and reads ``VmHWM`` (peak resident set) from ``/proc/<pid>/status`` before and
after. A 3 MiB upload first warms the server up. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "tests" / "multipart" / "memory_app.py"
MiB = 1024 * 1024
TARGET = 20 * MiB
BOUNDARY = b"bench-boundary-2f9c1e"


def peak_rss(pid: int) -> int:
    """``VmHWM`` of ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc status")


def upload(port: int, size: int, piece: int) -> float:
    """POST one file field of ``size`` bytes; returns the seconds it took."""
    before = (
        b"--" + BOUNDARY + b"\r\n"
        b'Content-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    after = b"\r\n--" + BOUNDARY + b"--\r\n"
    head = (
        b"POST /upload HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n"
        b"Content-Type: multipart/form-data; boundary=" + BOUNDARY + b"\r\n"
        b"Content-Length: %d\r\n\r\n" % (len(before) + size + len(after))
    )
    block = b"m" * piece
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head + before)
        left = size
        while left:
            count = min(piece, left)
            sock.sendall(block if count == piece else block[:count])
            left -= count
        sock.sendall(after)
        response = b""
        while chunk := sock.recv(65536):
            response += chunk
    elapsed = time.perf_counter() - start
    status = response.split(b" ", 2)[1]
    if status != b"200" or b'"file",%d' % size not in response:
        raise RuntimeError(f"unexpected response: {response[:300]!r}")
    return elapsed


def start_server(directory: str) -> tuple[subprocess.Popen[bytes], int]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen([sys.executable, str(APP), directory], env=env, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"memory_app.py did not start: {line!r}")
    return proc, int(line.split()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=100, help="upload size (100)")
    parser.add_argument("--piece-kib", type=int, default=1024, help="client write size (1024)")
    parser.add_argument("--runs", type=int, default=3, help="uploads, each in a fresh server (3)")
    args = parser.parse_args()
    size, piece = args.size_mib * MiB, args.piece_kib * 1024
    print(f"{args.size_mib} MiB upload, {args.piece_kib} KiB client writes, {args.runs} runs")
    growths = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="multipart-memory-") as directory:
            proc, port = start_server(directory)
            try:
                upload(port, 3 * MiB, 256 * 1024)
                before = peak_rss(proc.pid)
                seconds = upload(port, size, piece)
                after = peak_rss(proc.pid)
            finally:
                proc.kill()
                proc.wait()
        growths.append(after - before)
        print(
            f"  run {run}: peak RSS {before / MiB:.1f} -> {after / MiB:.1f} MiB "
            f"(+{(after - before) / MiB:.2f} MiB), {seconds:.2f} s, {size / MiB / seconds:.0f} MiB/s"
        )
    worst = max(growths)
    verdict = "met" if worst < TARGET else "MISSED"
    print(f"worst peak RSS growth: {worst / MiB:.2f} MiB (target < {TARGET // MiB} MiB: {verdict})")
    return 0 if worst < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
