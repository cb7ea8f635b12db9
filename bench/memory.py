#!/usr/bin/env python3
"""Server memory per idle connection: HTTP/1.1 keep-alive, WebSocket and HTTP/2, 1,000 each.

    python bench/memory.py [--connections 1000] [--only http1,http1-llhttp,...]
        [--trioframe [LABEL=]DIR ...] [--json out.json]

For each kind of connection a fresh server process starts on 127.0.0.1 (trioframe serving
``bench/apps/memory_app.py``; Uvicorn and Granian serving ``bench/apps/starlette_app.py``),
is warmed up with a few connections of that kind, and its resident memory (``VmRSS`` in
``/proc/PID/status``, summed over the server's processes: Granian serves from a worker
process) is read at rest. Then this script opens ``--connections`` connections and leaves
them idle: each HTTP/1.1 connection has sent one request and read its keep-alive response,
each WebSocket has completed its upgrade, each HTTP/2 connection has exchanged SETTINGS and
one request. Once the server is idle again its RSS is read again; the figure is the growth
divided by the number of connections. The RSS is also read with half of them open: the
growth over the second half alone leaves out memory that the warm-up freed and the first
connections reused. ``--trioframe`` (repeatable) measures each trioframe kind once per
checkout, one after the other (see ``checkouts.py``). Linux only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import PY, ROOT, TRIOFRAME_PROBE, Checkout, add_option, environment, parse_checkouts
from checkouts import probe as probe_checkout
from run import APPS, ServerFailed, free_port, stop_server, wait_for_port

SOCKET_TIMEOUT = 10.0  # seconds for any one connect, send or response
WARMUP_CONNECTIONS = 20
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
UVICORN = (PY, "-m", "uvicorn", "--host", "127.0.0.1", "--workers", "1", "--loop", "asyncio")
UVICORN_QUIET = ("--timeout-keep-alive", "600", "--no-access-log", "--log-level", "warning")
UVICORN_APP = (*UVICORN_QUIET, "bench.apps.starlette_app:app")


# -- the connections -------------------------------------------------------------------------


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """Read up to the end of a response head: (the head, whatever came after it)."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise ServerFailed(f"connection closed before a response head: {buffer[:80]!r}")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    return head, rest


def open_http1(port: int) -> socket.socket:
    """A keep-alive connection that has sent ``GET /plaintext`` and read the whole response."""
    sock = connect(port)
    sock.sendall(b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    head, body = read_head(sock)
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    if not lines[0].startswith("HTTP/1.1 200") or headers.get("connection") == "close":
        raise ServerFailed(f"not a keep-alive 200 response: {head[:200]!r}")
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ServerFailed("connection closed in the middle of a response body")
        body += chunk
    return sock


def open_websocket(port: int, path: bytes = b"/ws") -> socket.socket:
    """A WebSocket on ``path`` whose upgrade (101, ``Sec-WebSocket-Accept``) is checked."""
    sock = connect(port)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(
        b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\n"
        b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    head, _ = read_head(sock)
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    if not head.startswith(b"HTTP/1.1 101") or accept not in head:
        raise ServerFailed(f"WebSocket upgrade refused: {head[:200]!r}")
    return sock


def open_http2(port: int) -> socket.socket:
    """An h2c (prior knowledge) connection that has exchanged SETTINGS and one ``GET``."""
    import h2.config
    import h2.connection
    import h2.events

    sock = connect(port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    headers = [(":method", "GET"), (":path", "/plaintext"), (":scheme", "http")]
    conn.send_headers(1, [*headers, (":authority", "127.0.0.1")], end_stream=True)
    sock.sendall(conn.data_to_send())
    status, ended = None, False
    while not ended:
        data = sock.recv(65536)
        if not data:
            raise ServerFailed("HTTP/2 connection closed before the response ended")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = dict(event.headers).get(b":status")
            elif isinstance(event, h2.events.StreamEnded):
                ended = True
            elif isinstance(event, h2.events.ConnectionTerminated):
                raise ServerFailed(f"HTTP/2 GOAWAY: {event.error_code}")
        sock.sendall(conn.data_to_send())  # the SETTINGS acknowledgement, window updates
    if status != b"200":
        raise ServerFailed(f"HTTP/2 response status {status!r}")
    return sock


def still_open(sock: socket.socket) -> bool:
    """Whether the server has left this connection open (nothing to read, no end of file)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


# -- the servers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """One kind of idle connection on one server."""

    name: str  # what --only selects
    server: str  # the table's description
    probe: str  # Python code run first: failure means "skipped", its last line names versions
    command: Callable[[int, int], list[str]]  # (port, connections) -> the server's command
    open: Callable[[int], socket.socket]
    trioframe: bool = False  # served by trioframe: once per --trioframe checkout


@dataclass(frozen=True)
class Run:
    """A kind on one checkout (``None``: a peer, or this checkout's trioframe)."""

    kind: Kind
    checkout: Checkout | None

    @property
    def label(self) -> str:
        return (
            self.kind.name if self.checkout is None else f"{self.checkout.label}:{self.kind.name}"
        )


VERSIONS = "from importlib.metadata import version as v\n"
TRIOFRAME_VERSIONS = VERSIONS + "print('trio', v('trio'), 'h11', v('h11'), {extra})"


def trioframe_kind(name: str, server: str, extra: str, *options: str) -> Kind:
    return Kind(
        name,
        f"trioframe, {server}",
        TRIOFRAME_VERSIONS.format(extra=extra),
        lambda port, n: [
            *(PY, str(APPS / "memory_app.py"), str(port), "--max-connections", str(n + 100)),
            *options,
        ],
        open_http2 if name == "http2" else open_websocket if name == "websocket" else open_http1,
        trioframe=True,
    )


def uvicorn_kind(http: str) -> Kind:
    return Kind(
        f"uvicorn-{http}",
        f"Starlette on Uvicorn (http={http}, asyncio), HTTP/1.1 keep-alive",
        VERSIONS + f"import {http}, starlette, uvicorn\n"
        f"print('uvicorn', v('uvicorn'), '{http}', v('{http}'), 'starlette', v('starlette'))",
        lambda port, n: [*UVICORN, "--port", str(port), "--http", http, *UVICORN_APP],
        open_http1,
    )


def uvicorn_websocket_kind() -> Kind:
    """Starlette's WebSocket echo on Uvicorn with the websockets library, asyncio loop
    (``apps/uvicorn_ws_echo.py``, pings off): the peer of trioframe's ``websocket``."""
    return Kind(
        "uvicorn-websocket",
        "Starlette on Uvicorn (ws=websockets, asyncio), WebSocket (echo handler waiting)",
        VERSIONS + "import starlette, uvicorn, websockets\n"
        "print('uvicorn', v('uvicorn'), 'websockets', v('websockets'),"
        " 'starlette', v('starlette'))",
        lambda port, n: [PY, str(APPS / "uvicorn_ws_echo.py"), str(port)],
        lambda port: open_websocket(port, b"/"),
    )


def granian_kind(http: str) -> Kind:
    """Starlette on Granian (a Rust server), one worker, the asyncio loop; ``--http 2``
    serves h2c with prior knowledge. Granian closes no idle HTTP/1.1 connection on its own
    and pings no HTTP/2 one unless told to."""
    name = "HTTP/1.1 keep-alive" if http == "1" else "HTTP/2 (h2c)"
    return Kind(
        f"granian-http{http}",
        f"Starlette on Granian (asgi, asyncio, one worker), {name}",
        VERSIONS + "import granian, starlette\n"
        "print('granian', v('granian'), 'starlette', v('starlette'))",
        lambda port, n: [
            *(PY, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1"),
            *("--port", str(port), "--workers", "1", "--loop", "asyncio", "--http", http),
            *("--backlog", str(max(n, 1024)), "--log-level", "warning"),
            "bench.apps.starlette_app:app",
        ],
        open_http1 if http == "1" else open_http2,
    )


KINDS = [
    trioframe_kind("http1", "HTTP/1.1 keep-alive (h11)", "''", "--http1-parser", "h11"),
    trioframe_kind(
        "http1-llhttp",
        "HTTP/1.1 keep-alive (llhttp, the speedups extra)",
        "'httptools', v('httptools')",
        *("--http1-parser", "llhttp"),
    ),
    trioframe_kind("websocket", "WebSocket (echo handler waiting)", "'wsproto', v('wsproto')"),
    trioframe_kind("http2", "HTTP/2 (h2c)", "'h2', v('h2')", "--http2"),
    uvicorn_kind("h11"),
    uvicorn_kind("httptools"),
    uvicorn_websocket_kind(),
    granian_kind("1"),
    granian_kind("2"),
]
KIND_NAMES = [kind.name for kind in KINDS]


def server_pids(pid: int) -> list[int]:
    """``pid`` and every process under it (Granian's worker, say)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process has just ended
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    pids, pending = [], [pid]
    while pending:
        current = pending.pop()
        pids.append(current)
        pending += children.get(current, [])
    return pids


def rss_bytes(pid: int) -> int:
    """The resident memory of the server: ``pid`` and its child processes."""
    return sum(process_rss(each) for each in server_pids(pid))


def process_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise ServerFailed(f"no VmRSS in /proc/{pid}/status")


def cpu_ticks(pid: int) -> int:
    total = 0
    for each in server_pids(pid):
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total


def wait_until_idle(pid: int, timeout: float) -> None:
    """Wait until the server has used no CPU for half a second (at most ``timeout``)."""
    deadline = time.monotonic() + timeout
    before = cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        after = cpu_ticks(pid)
        if after == before:
            return
        before = after
    raise ServerFailed(f"still busy after {timeout:.0f} s")


# -- one measurement -------------------------------------------------------------------------


@dataclass
class Result:
    kind: str
    server: str
    status: str  # "ok", "skipped" or "failed"
    detail: str  # versions, or why it was skipped or failed
    connections: int = 0
    rss_at_rest: int = 0
    rss_with_half: int = 0  # with the first half of the connections open
    rss_with_connections: int = 0
    open_seconds: float = 0.0

    @property
    def per_connection(self) -> float:
        """The growth from rest to all connections open, over their number."""
        return (self.rss_with_connections - self.rss_at_rest) / self.connections

    @property
    def second_half(self) -> float:
        """The growth over the second half of the connections, over their number: memory
        the warm-up freed and the first connections reused is not in it."""
        return (self.rss_with_connections - self.rss_with_half) / (
            self.connections - self.connections // 2
        )


def open_many(kind: Kind, port: int, n: int, deadline: float) -> list[socket.socket]:
    sockets: list[socket.socket] = []
    try:
        for _ in range(n):
            if time.monotonic() > deadline:
                raise ServerFailed(f"only {len(sockets)} of {n} connections open in time")
            sockets.append(kind.open(port))
    except BaseException:
        close_all(sockets)
        raise
    return sockets


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def measure(run: Run, n: int, timeout: float, log_dir: Path) -> Result:
    kind, label = run.kind, run.label
    ok, detail = probe(kind.probe, run.checkout)
    if ok and run.checkout is not None:
        ok, where = probe_checkout(TRIOFRAME_PROBE, run.checkout)
        detail = f"{where}; {detail}" if ok else where
    if not ok:
        return Result(label, kind.server, "skipped", detail)
    port = free_port()
    log_path = log_dir / f"{label.replace(':', '-')}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            kind.command(port, n),
            cwd=ROOT,
            env=environment(run.checkout),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_port(proc, port, timeout=30)
        deadline = time.monotonic() + timeout
        close_all(open_many(kind, port, WARMUP_CONNECTIONS, deadline))
        wait_until_idle(proc.pid, timeout)
        at_rest = rss_bytes(proc.pid)
        started = time.monotonic()
        sockets = open_many(kind, port, n // 2, deadline)
        try:
            wait_until_idle(proc.pid, timeout)
            half = rss_bytes(proc.pid)
            sockets += open_many(kind, port, n - n // 2, deadline)
            opened = time.monotonic() - started
            wait_until_idle(proc.pid, timeout)
            loaded = rss_bytes(proc.pid)
            closed = sum(not still_open(sock) for sock in sockets)
            if closed:
                raise ServerFailed(f"the server closed {closed} of the {n} idle connections")
        finally:
            close_all(sockets)
        return Result(label, kind.server, "ok", detail, n, at_rest, half, loaded, opened)
    except (ServerFailed, OSError) as exc:
        tail = log_path.read_text(errors="replace")[-400:]
        return Result(label, kind.server, "failed", f"{exc}; log: {tail!r}")
    finally:
        stop_server(proc, timeout=10)


def probe(code: str, checkout: Checkout | None = None) -> tuple[bool, str]:
    proc = subprocess.run(
        [PY, "-P", "-c", code],
        cwd=ROOT,
        env=environment(checkout),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = (proc.stdout if proc.returncode == 0 else proc.stderr).strip().splitlines()
    return proc.returncode == 0, lines[-1] if lines else f"probe exited {proc.returncode}"


def raise_file_limit(n: int) -> None:
    """Room for ``n`` client sockets here and ``n`` accepted ones in the server (inherited)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = n + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            raise SystemExit(
                f"RLIMIT_NOFILE hard limit {hard} is below {wanted}: lower --connections"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


# -- the report ------------------------------------------------------------------------------


def mib(value: float) -> str:
    return f"{value / 2**20:.1f}"


def print_report(results: list[Result]) -> None:
    for result in results:
        print(f"  {result.kind:24} {result.status:8} {result.server}: {result.detail}")
    print()
    print(
        f"{'kind':24} {'connections':>11} {'RSS at rest MiB':>15} {'with them MiB':>13} "
        f"{'bytes/connection':>16} {'KiB':>5} {'2nd half KiB':>12}"
    )
    for r in results:
        if r.status == "ok":
            print(
                f"{r.kind:24} {r.connections:>11,} {mib(r.rss_at_rest):>15} "
                f"{mib(r.rss_with_connections):>13} {r.per_connection:>16,.0f} "
                f"{r.per_connection / 1024:>5.1f} {r.second_half / 1024:>12.1f}"
            )


def runs_of(kinds: list[Kind], checkouts: list[Checkout] | None) -> list[Run]:
    """Each kind once, a trioframe kind once per checkout (the checkouts of one kind one
    after the other, so that they are measured close together)."""
    runs = []
    for kind in kinds:
        if kind.trioframe and checkouts:
            runs += [Run(kind, checkout) for checkout in checkouts]
        else:
            runs.append(Run(kind, None))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--connections", type=int, default=1000, help="idle connections (1000)")
    parser.add_argument("--only", default=",".join(KIND_NAMES), help=f"a subset of {KIND_NAMES}")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per kind (120)")
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    add_option(parser)
    args = parser.parse_args()
    names = args.only.split(",")
    if unknown := sorted(set(names) - set(KIND_NAMES)):
        parser.error(f"unknown --only {unknown}; choose from {KIND_NAMES}")
    try:
        checkouts = parse_checkouts(args.trioframe) if args.trioframe else None
    except ValueError as exc:
        parser.error(str(exc))
    raise_file_limit(args.connections)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # run the servers' clean-up
    print(f"{args.connections:,} idle connections per kind, a fresh server for each; RSS = VmRSS")
    results = []
    with tempfile.TemporaryDirectory(prefix="trioframe-memory-") as log_dir:
        for run in runs_of([kind for kind in KINDS if kind.name in names], checkouts):
            result = measure(run, args.connections, args.timeout, Path(log_dir))
            if result.status == "ok":
                print(
                    f"[{run.label}] RSS {mib(result.rss_at_rest)} MiB at rest, "
                    f"{mib(result.rss_with_half)} with {args.connections // 2:,} connections, "
                    f"{mib(result.rss_with_connections)} with {args.connections:,} "
                    f"(opened in {result.open_seconds:.1f} s)",
                    flush=True,
                )
            results.append(result)
    print()
    print_report(results)
    if args.json:
        rows = [
            asdict(r)
            | (
                {"per_connection": r.per_connection, "second_half": r.second_half}
                if r.status == "ok"
                else {}
            )
            for r in results
        ]
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the servers were stopped on the way out
        sys.exit(130)
