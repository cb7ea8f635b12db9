#!/usr/bin/env python3
"""WebSocket echo round trips per second: trioframe against trio-websocket and Uvicorn.

    python bench/websocket.py [--duration 5] [--rounds 2] [--clients 1,50] [--size 64]
        [--client raw|websockets] [--only trioframe,trio-websocket,uvicorn] [--json out.json]

The echo servers (``bench/autobahn/echo_app.py``, ``bench/autobahn/trio_websocket_echo.py``
and Uvicorn + websockets on asyncio, ``bench/apps/uvicorn_ws_echo.py``) run as processes on 127.0.0.1 on free ports, pinned to one core; the load generator is a
separate process per measurement, pinned to the other core. Each connection sends one text
message, waits for the echo, checks it byte for byte and sends the next, so ``--clients``
connections keep that many messages in flight. The servers are measured alternately (A, B,
A, B, ...) to even out the machine's drift. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import random
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import PY, ROOT, add_option, environment, parse_checkouts
from run import (  # the sibling script is the library here
    ServerFailed,
    ServerSpec,
    free_port,
    pin_to,
    probe,
    stop_server,
    subprocess_env,
    wait_for_port,
)

AUTOBAHN = Path(__file__).resolve().parent / "autobahn"
APPS = Path(__file__).resolve().parent / "apps"
VERSIONS = "from importlib.metadata import version as v\n"
SERVERS = [
    ServerSpec(
        "trioframe",
        "trioframe Router().websocket echo",
        "import trioframe, wsproto\nfrom trioframe import Message, Router, WebSocketConnection\n"
        "Router().websocket\nprint(trioframe.__path__[0])",
        lambda port: [PY, str(AUTOBAHN / "echo_app.py"), str(port)],
    ),
    ServerSpec(
        "trio-websocket",
        "trio_websocket.serve_websocket echo",
        VERSIONS + "import trio_websocket\n"
        "print('trio-websocket', v('trio-websocket') + ', wsproto', v('wsproto'),"
        " '+ trio', v('trio'))",
        lambda port: [PY, str(AUTOBAHN / "trio_websocket_echo.py"), str(port)],
    ),
    ServerSpec(
        "uvicorn",
        "Uvicorn --ws websockets, Starlette echo route",
        VERSIONS + "import starlette, uvicorn, websockets\n"
        "print('Uvicorn', v('uvicorn'), '+ websockets', v('websockets'), '+ Starlette',"
        " v('starlette'), 'on asyncio')",
        lambda port: [PY, str(APPS / "uvicorn_ws_echo.py"), str(port)],
    ),
]
SERVER_NAMES = [spec.name for spec in SERVERS]
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
REPLY_TIMEOUT = 10.0  # seconds without any echo before the load generator gives up


# -- the load generator (runs as its own process: ``websocket.py client ...``) ---------------


class LoadError(Exception):
    """A wrong echo, a refused upgrade or a server that stopped answering."""


@dataclass
class LoadResult:
    round_trips: int
    seconds: float
    p50_us: int
    p99_us: int
    cpu_seconds: float  # the load generator's own CPU time over the measurement
    capped: bool = False
    server_cpu_seconds: float | None = None  # the server's CPU time, where /proc tells it

    @property
    def server_us_per_round_trip(self) -> float | None:
        """Server CPU per echo: steadier than the rate on a busy machine, since time the
        server spends waiting for a core is not counted."""
        if self.server_cpu_seconds is None or not self.round_trips:
            return None
        return self.server_cpu_seconds / self.round_trips * 1e6

    @property
    def rate(self) -> float:
        return self.round_trips / self.seconds

    @property
    def client_cpu(self) -> float:
        """Share of one core the load generator used: near 1.0 means it was the bottleneck."""
        return self.cpu_seconds / self.seconds


def client_frame(payload: bytes, opcode: int = 1) -> bytes:
    """One masked, final client frame (a fresh masking key each time, as RFC 6455 asks)."""
    n = len(payload)
    if n < 126:
        header = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        header = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        header = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    key = random.randbytes(4)
    mask = int.from_bytes((key * (n // 4 + 1))[:n], "little")
    return header + key + (int.from_bytes(payload, "little") ^ mask).to_bytes(n, "little")


def server_frame(payload: bytes, opcode: int = 1) -> bytes:
    """The unmasked, single-frame echo a server sends back."""
    n = len(payload)
    if n < 126:
        return bytes((0x80 | opcode, n)) + payload
    if n < 1 << 16:
        return bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big") + payload


def handshake(port: int) -> tuple[socket.socket, bytearray]:
    """Open one WebSocket connection to ``/``; return the socket and any bytes past the head."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=REPLY_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
        % (port, key)
    )
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise LoadError(f"connection closed during the upgrade: {bytes(data)!r}")
        data += chunk
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(b":") for x in lines[1:])}
    if not lines[0].startswith(b"HTTP/1.1 101") or headers.get(b"sec-websocket-accept") != accept:
        raise LoadError(f"upgrade refused: {head[:300]!r}")
    sock.setblocking(False)
    return sock, bytearray(rest)


def close_quietly(sock: socket.socket) -> None:
    """Send a Close (1000), wait briefly for the server's, then drop the socket."""
    with contextlib.suppress(OSError):
        sock.setblocking(True)
        sock.settimeout(2.0)
        sock.sendall(client_frame((1000).to_bytes(2, "big"), opcode=8))
        while sock.recv(4096):
            pass
    sock.close()


def parse_frame(buffer: bytearray) -> tuple[int, bytes, int] | None:
    """(opcode, payload, bytes used) of the first complete server frame, or None."""
    if len(buffer) < 2:
        return None
    if buffer[1] & 0x80 or not buffer[0] & 0x80:
        raise LoadError(f"masked or fragmented server frame: {bytes(buffer[:80])!r}")
    n, at = buffer[1], 2
    if n == 126:
        n, at = int.from_bytes(buffer[2:4], "big"), 4
    elif n == 127:
        n, at = int.from_bytes(buffer[2:10], "big"), 10
    if len(buffer) < at or len(buffer) < at + n:
        return None
    return buffer[0] & 0x0F, bytes(buffer[at : at + n]), at + n


@dataclass
class Conn:
    sock: socket.socket
    buffer: bytearray
    sent_at: float = 0.0

    def replies(self, expected: bytes, payload: bytes) -> int:
        """Take the complete frames from the buffer: count the echoes, answer pings."""
        if self.buffer == expected:  # the usual case: exactly one echo
            self.buffer.clear()
            return 1
        echoes = 0
        while frame := parse_frame(self.buffer):
            opcode, data, used = frame
            del self.buffer[:used]
            if opcode == 9:  # the server's keep-alive ping
                self.sock.sendall(client_frame(data, opcode=10))
            elif opcode == 1 and data == payload:
                echoes += 1
            elif opcode != 10:
                raise LoadError(f"unexpected frame: opcode {opcode}, {data[:80]!r}")
        return echoes


def raw_load(port: int, connections: int, seconds: float, size: int, cap: int) -> LoadResult:
    """A small selector loop over plain sockets: the cheapest client per round trip."""
    payload = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    expected = server_frame(payload)
    conns = [Conn(*handshake(port)) for _ in range(connections)]
    selector = selectors.DefaultSelector()
    latencies: list[float] = []
    done = 0
    try:
        cpu0 = time.process_time()
        start = time.perf_counter()
        end = start + seconds
        last = start
        for conn in conns:
            selector.register(conn.sock, selectors.EVENT_READ, conn)
            conn.sent_at = time.perf_counter()
            conn.sock.send(client_frame(payload))
        active = len(conns)
        while active:
            events = selector.select(REPLY_TIMEOUT)
            if not events:
                raise LoadError(f"no echo within {REPLY_TIMEOUT:.0f} s")
            for key, _ in events:
                conn = key.data
                chunk = conn.sock.recv(65536)
                if not chunk:
                    raise LoadError("the server closed a connection during the run")
                conn.buffer += chunk
                echoes = conn.replies(expected, payload)
                if not echoes:
                    continue
                if echoes > 1:
                    raise LoadError(f"{echoes} echoes for one message")
                last = time.perf_counter()
                latencies.append(last - conn.sent_at)
                done += 1
                if last < end and done + active <= cap:
                    conn.sent_at = last
                    conn.sock.send(client_frame(payload))
                else:
                    selector.unregister(conn.sock)
                    active -= 1
        cpu = time.process_time() - cpu0
    finally:
        selector.close()
        for conn in conns:
            close_quietly(conn.sock)
    return summarize(done, last - start, latencies, cpu, cap)


def websockets_load(port: int, connections: int, seconds: float, size: int, cap: int) -> LoadResult:
    """The same exchange with the ``websockets`` asyncio client (C-accelerated framing)."""
    from websockets.asyncio.client import connect

    text = ("0123456789abcdef" * (size // 16 + 1))[:size]
    latencies: list[float] = []
    counter = [0]

    async def one(ws: Any, end: float) -> None:
        while True:
            sent = time.perf_counter()
            await ws.send(text)
            if await ws.recv() != text:
                raise LoadError("wrong echo")
            now = time.perf_counter()
            latencies.append(now - sent)
            counter[0] += 1
            if now >= end or counter[0] >= cap:
                return

    async def main() -> tuple[float, float]:
        async with contextlib.AsyncExitStack() as stack:
            uri = f"ws://127.0.0.1:{port}/"
            sockets = [
                await stack.enter_async_context(connect(uri, compression=None, max_size=None))
                for _ in range(connections)
            ]
            cpu0 = time.process_time()
            start = time.perf_counter()
            async with asyncio.timeout(seconds + REPLY_TIMEOUT):
                await asyncio.gather(*(one(ws, start + seconds) for ws in sockets))
            return time.perf_counter() - start, time.process_time() - cpu0

    elapsed, cpu = asyncio.run(main())
    return summarize(counter[0], elapsed, latencies, cpu, cap)


def summarize(
    done: int, elapsed: float, latencies: list[float], cpu: float, cap: int
) -> LoadResult:
    if not latencies:
        raise LoadError("no round trip completed")
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return LoadResult(
        done,
        elapsed,
        round(statistics.median(latencies) * 1e6),
        round(p99 * 1e6),
        cpu,
        capped=done >= cap,
    )


LOAD_GENERATORS = {"raw": raw_load, "websockets": websockets_load}


def client_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="websocket.py client")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--max-messages", type=int, required=True)
    parser.add_argument("--kind", choices=sorted(LOAD_GENERATORS), required=True)
    args = parser.parse_args(argv)
    load = LOAD_GENERATORS[args.kind]
    try:
        result = load(args.port, args.connections, args.seconds, args.size, args.max_messages)
    except (LoadError, OSError, TimeoutError) as exc:
        print(f"BENCH_ERROR {type(exc).__name__}: {exc}", flush=True)
        return 1
    print("BENCH_RESULT " + json.dumps(asdict(result)), flush=True)
    return 0


# -- the orchestrator --------------------------------------------------------------------------


@dataclass
class ServerRun:
    spec: ServerSpec
    detail: str = ""
    status: str = "ok"  # ok | skipped | failed
    stop: str = ""
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    results: dict[int, list[LoadResult]] = field(default_factory=dict)  # by client count


def run_load(port: int, clients: int, seconds: float, args: argparse.Namespace) -> LoadResult:
    command = [
        *(PY, __file__, "client", "--port", str(port), "--connections", str(clients)),
        *("--seconds", str(seconds), "--size", str(args.size)),
        *("--max-messages", str(args.max_messages), "--kind", args.client),
    ]
    proc = subprocess.run(
        command,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        preexec_fn=pin_to(args.client_cpu),
    )
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return LoadResult(**json.loads(line.removeprefix("BENCH_RESULT ")))
        if line.startswith("BENCH_ERROR "):
            raise ServerFailed(line.removeprefix("BENCH_ERROR "))
    raise ServerFailed(f"load generator exited {proc.returncode}: {proc.stderr.strip()[-500:]}")


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` from ``/proc`` (``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(server: ServerRun, log: Path, args: argparse.Namespace) -> None:
    ok, server.detail = probe(server.spec)
    if not ok:
        server.status = "skipped"
        return
    server.port = free_port()
    with log.open("wb") as out:
        server.proc = subprocess.Popen(
            server.spec.command(server.port),
            cwd=ROOT,
            env=environment(server.spec.checkout),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=pin_to(args.server_cpu),
        )
    wait_for_port(server.proc, server.port, 20.0)
    print(f"[{server.spec.label}] {server.detail}: serving on 127.0.0.1:{server.port}", flush=True)


def fail(server: ServerRun, exc: Exception, log: Path) -> None:
    server.status = "failed"
    tail = log.read_text(errors="replace").strip().splitlines()[-15:] if log.exists() else []
    server.detail = "\n".join([str(exc), *("    | " + line for line in tail)])


def measure(servers: list[ServerRun], logs: Path, args: argparse.Namespace) -> None:
    for clients in args.clients:
        for server in servers:
            if server.status == "ok" and args.warmup:
                try:
                    run_load(server.port, clients, args.warmup, args)
                except (ServerFailed, subprocess.TimeoutExpired) as exc:
                    fail(server, exc, logs / f"{server.spec.label}.log")
        for round_no in range(1, args.rounds + 1):
            for server in servers:  # interleaved: A, B, A, B
                if server.status != "ok":
                    continue
                print(
                    f"[{server.spec.label}] {clients} client(s), round {round_no}/{args.rounds}",
                    flush=True,
                )
                assert server.proc is not None
                cpu_before = process_cpu_seconds(server.proc.pid)
                try:
                    result = run_load(server.port, clients, args.duration, args)
                except (ServerFailed, subprocess.TimeoutExpired) as exc:
                    fail(server, exc, logs / f"{server.spec.label}.log")
                    continue
                cpu_after = process_cpu_seconds(server.proc.pid)
                if cpu_before is not None and cpu_after is not None:
                    result.server_cpu_seconds = cpu_after - cpu_before
                server.results.setdefault(clients, []).append(result)
                if server.proc is not None and server.proc.poll() is not None:
                    fail(server, ServerFailed("died under load"), logs / f"{server.spec.label}.log")


def mean_rate(results: list[LoadResult]) -> float:
    return sum(r.round_trips for r in results) / sum(r.seconds for r in results)


def server_us(results: list[LoadResult]) -> float | None:
    """Server CPU microseconds per round trip over all rounds (``None`` without ``/proc``)."""
    if any(r.server_cpu_seconds is None for r in results):
        return None
    done = sum(r.round_trips for r in results)
    return sum(r.server_cpu_seconds or 0.0 for r in results) / done * 1e6 if done else None


def print_report(servers: list[ServerRun], args: argparse.Namespace) -> None:
    pinning = (
        f"servers on CPU {args.server_cpu}, load generator on CPU {args.client_cpu}"
        if args.server_cpu is not None
        else "no CPU pinning"
    )
    print(
        f"\nWebSocket echo, {args.size}-byte text messages, {args.client} client; "
        f"{args.rounds} round(s) x {args.duration} s per server, interleaved; {pinning}"
    )
    for s in servers:
        stop = f" [{s.stop}]" if s.stop else ""
        print(f"  {s.spec.label:<15} {s.status:<8} {s.spec.description}{stop}: {s.detail}")
    print(
        f"\n{'clients':<8} {'server':<15} {'round trips/s':>14} {'p50 ms':>7} {'p99 ms':>7}"
        f" {'client CPU':>10} {'server µs/rt':>12}  rounds"
    )
    peers = {s.spec.name: s for s in servers if s.spec.name != "trioframe"}
    ours_all = [s for s in servers if s.spec.name == "trioframe"]
    for clients in args.clients:
        for i, s in enumerate(servers):
            results = s.results.get(clients)
            if not results:
                continue
            p50 = statistics.median(r.p50_us for r in results) / 1000
            p99 = max(r.p99_us for r in results) / 1000
            cpu = max(r.client_cpu for r in results)
            us = server_us(results)
            us_text = "-" if us is None else f"{us:.1f}"
            rounds = " ".join(f"{r.rate:,.0f}" for r in results)
            capped = " (message cap reached)" if any(r.capped for r in results) else ""
            label = str(clients) if i == 0 else ""
            print(
                f"{label:<8} {s.spec.label:<15} {mean_rate(results):>14,.0f} {p50:>7.2f}"
                f" {p99:>7.2f} {cpu:>10.0%} {us_text:>12}  {rounds}{capped}"
            )
        for ours, (peer, theirs) in itertools.product(ours_all, peers.items()):
            if not (ours.results.get(clients) and theirs.results.get(clients)):
                continue
            ratio = mean_rate(ours.results[clients]) / mean_rate(theirs.results[clients])
            line = f"{'':<8} {ours.spec.label} / {peer}: {ratio:.2f} by rate"
            our_us, their_us = server_us(ours.results[clients]), server_us(theirs.results[clients])
            if our_us and their_us:  # as a speed: their CPU per round trip over ours
                line += f", {their_us / our_us:.2f} by server CPU per round trip"
            print(line)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="measurements per server")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up")
    parser.add_argument("--clients", default="1,50", help="comma-separated connection counts")
    parser.add_argument("--size", type=int, default=64, help="bytes per text message")
    parser.add_argument(
        "--client",
        choices=sorted(LOAD_GENERATORS),
        default="raw",
        help="load generator: raw sockets (default, cheapest) or the websockets library",
    )
    parser.add_argument(
        "--only",
        default=",".join(SERVER_NAMES),
        help=f"comma-separated servers, from {','.join(SERVER_NAMES)} (default: all)",
    )
    add_option(parser)
    parser.add_argument(
        "--max-messages",
        type=int,
        default=10_000_000,
        help="hard cap on round trips per measurement, on top of --duration",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    args = parser.parse_args(argv)
    try:
        args.clients = [int(n) for n in args.clients.split(",") if n.strip()]
    except ValueError:
        parser.error("--clients takes comma-separated integers")
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(SERVER_NAMES))
    if unknown:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {SERVER_NAMES}")
    if args.duration <= 0 or args.rounds < 1 or not args.clients or min(args.clients) < 1:
        parser.error("--duration > 0, --rounds >= 1 and --clients >= 1 are required")
    if not 1 <= args.size <= 1 << 20:
        parser.error("--size must be between 1 and 1048576 (the servers' message limit is 32 MiB)")
    cpus = sorted(os.sched_getaffinity(0))
    pin = not args.no_pin and len(cpus) >= 2
    args.server_cpu = cpus[0] if pin else None
    args.client_cpu = cpus[1] if pin else None
    return args


def main(argv: list[str]) -> int:
    if argv[:1] == ["client"]:
        return client_main(argv[1:])
    args = parse_args(argv)
    checkouts = parse_checkouts(args.trioframe) if args.trioframe else [None]
    servers = [
        ServerRun(
            dataclasses.replace(spec, checkout=checkout) if spec.name == "trioframe" else spec
        )
        for spec in SERVERS
        if spec.name in args.only
        for checkout in (checkouts if spec.name == "trioframe" else [None])
    ]
    with tempfile.TemporaryDirectory(prefix="trioframe-wsbench-") as tmp:
        logs = Path(tmp)
        try:
            for server in servers:
                try:
                    start(server, logs / f"{server.spec.label}.log", args)
                except ServerFailed as exc:
                    fail(server, exc, logs / f"{server.spec.label}.log")
            measure(servers, logs, args)
        finally:
            for server in servers:
                if server.proc is not None:
                    server.stop = stop_server(server.proc, 10.0)
    print_report(servers, args)
    if args.json:
        report = {
            "options": {k: v for k, v in vars(args).items() if k != "json"},
            "servers": [
                {
                    "name": s.spec.label,
                    "status": s.status,
                    "detail": s.detail,
                    "stop": s.stop,
                    "results": {
                        str(clients): [{**asdict(r), "rate": round(r.rate, 1)} for r in results]
                        for clients, results in s.results.items()
                    },
                }
                for s in servers
            ],
        }
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"\nresults written to {args.json}")
    return 0 if all(s.status != "failed" for s in servers) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
