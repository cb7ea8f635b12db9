#!/usr/bin/env python3
"""Count the CPU instructions each HTTP server spends per request, under valgrind's callgrind.

    python bench/instructions.py [--requests 2000] [--connections 50] [--only trioframe,bare]
        [--trioframe main=/work/main --trioframe new=/work/wt/x] [--json out.json]

Unlike requests/s, an instruction count does not depend on what else the machine is doing:
the same server, code and requests give the same count to a fraction of a per cent. Each
server runs as one process under callgrind on 127.0.0.1; this script is the client (plain
sockets, keep-alive, one request in flight per connection) and is not under valgrind. See
bench/README.md for what is counted and how to read the table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import (
    PY,
    ROOT,
    TRIOFRAME_PROBE,
    Checkout,
    add_option,
    environment,
    parse_checkouts,
    probe,
)
from run import (  # the sibling script is the library here
    APPS,
    ENDPOINTS,
    RECORD,
    Endpoint,
    ServerFailed,
    check_endpoints,
    free_port,
    stop_server,
    wait_for_port,
)

RECEIVE_SIZE = 64 * 1024
VERSIONS = "from importlib.metadata import version as v\n"
UVICORN = (PY, "-m", "uvicorn", "--host", "127.0.0.1", "--workers", "1", "--loop", "asyncio")
UVICORN_QUIET = ("--no-access-log", "--log-level", "warning")
STARLETTE_APP = "bench.apps.starlette_app:app"
#: The endpoints a server serves unless its spec says otherwise: all but the typed record.
PLAIN = frozenset(ep.name for ep in ENDPOINTS)


@dataclass(frozen=True)
class ServerSpec:
    """One server to measure: ``probe`` is Python code run first (not under valgrind); if it
    fails the server is skipped, otherwise its last line of output describes the server."""

    name: str  # what --only selects
    label: str  # the name in the table
    probe: str
    command: Callable[[int], list[str]]
    checkout: Checkout | None = None  # trioframe's: the directory first on PYTHONPATH
    serves: frozenset[str] = PLAIN  # the endpoints it is checked and measured on


def trioframe_spec(checkout: Checkout, parser: str = "h11") -> ServerSpec:
    """trioframe from ``checkout`` on the HTTP/1.1 ``parser``, serving this checkout's app
    (``trioframe``: h11, the default path; ``trioframe-llhttp``: the speedups extra)."""
    name = "trioframe" if parser == "h11" else f"trioframe-{parser}"
    label = checkout.label if parser == "h11" else f"{checkout.label}-{parser}"
    return ServerSpec(
        name,
        label,
        trioframe_probe(parser),
        lambda port: [
            *(PY, str(APPS / "trioframe_app.py"), str(port)),
            *("--http1-parser", parser),
        ],
        checkout,
        PLAIN | {RECORD.name},
    )


def trioframe_probe(parser: str = "h11") -> str:
    """The probe of trioframe on the HTTP/1.1 ``parser``: any other than h11 needs the
    checkout to have the option, and the extra installed."""
    if parser == "h11":
        return TRIOFRAME_PROBE
    return (
        "import httptools\nfrom trioframe import ServerConfig\n"
        + TRIOFRAME_PROBE
        + f"\nServerConfig(http1_parser={parser!r})"
    )


def uvicorn_spec(http: str) -> ServerSpec:
    """Starlette on Uvicorn with the given HTTP implementation and the asyncio loop."""
    return ServerSpec(
        f"uvicorn-{http}",
        f"uvicorn-{http}",
        VERSIONS + f"import {http}, starlette, uvicorn\n"
        f"print('Starlette', v('starlette'), 'on Uvicorn', v('uvicorn'), 'http={http}',"
        f" v('{http}'), 'loop=asyncio')",
        lambda port: [*UVICORN, "--port", str(port), "--http", http, *UVICORN_QUIET, STARLETTE_APP],
    )


def typed_peer_spec(name: str, framework: str, modules: str, app: str) -> ServerSpec:
    """``framework`` serving only the typed record (``app``, a bench/apps module's ``app``) on
    Uvicorn with httptools and the asyncio loop; ``modules`` are the distributions whose
    versions the table names."""
    names = ", ".join(f"{m!r}, v({m!r})" for m in modules.split(","))
    return ServerSpec(
        name,
        name,
        VERSIONS + f"import httptools, uvicorn, bench.apps.{app}\n"
        f"print({framework!r}, {names}, 'on Uvicorn', v('uvicorn'), 'http=httptools',"
        " v('httptools'), 'loop=asyncio')",
        lambda port: [
            *(*UVICORN, "--port", str(port), "--http", "httptools", *UVICORN_QUIET),
            f"bench.apps.{app}:app",
        ],
        serves=frozenset({RECORD.name}),
    )


def granian_spec(task_impl: str) -> ServerSpec:
    """Starlette on Granian's embedded server, the app's coroutines run as ``task_impl`` tasks
    (``asyncio``: Granian's default; ``rust``: its own task implementation)."""
    name = "granian" if task_impl == "asyncio" else f"granian-{task_impl}"
    return ServerSpec(
        name,
        name,
        VERSIONS + "import granian, starlette\n"
        f"print('Starlette', v('starlette'), 'on Granian', v('granian'), 'embedded, asyncio loop,',"
        f" '{task_impl} tasks')",
        lambda port: [PY, "-m", "bench.apps.granian_embed", str(port), "--task-impl", task_impl],
    )


OTHER_SERVERS = [
    ServerSpec(
        "floor",
        "floor",
        VERSIONS + "import trio\nprint('trio', v('trio'), 'sockets, no HTTP parsing')",
        lambda port: [PY, str(APPS / "floor_trio.py"), str(port)],
    ),
    ServerSpec(
        "bare",
        "bare",
        VERSIONS + "import h11, trio\nprint('trio', v('trio'), '+ h11', v('h11'))",
        lambda port: [PY, str(APPS / "bare_h11.py"), str(port)],
    ),
    uvicorn_spec("h11"),
    uvicorn_spec("httptools"),
    granian_spec("asyncio"),
    granian_spec("rust"),
    ServerSpec(
        "hypercorn",
        "hypercorn",
        VERSIONS + "import hypercorn.trio, starlette\n"
        "print('Starlette', v('starlette'), 'on Hypercorn', v('hypercorn'), 'trio worker')",
        lambda port: [
            *(PY, "-m", "hypercorn", "--worker-class", "trio", "--workers", "0"),
            *("--bind", f"127.0.0.1:{port}", STARLETTE_APP),
        ],
    ),
    typed_peer_spec(
        "starlette-pydantic",
        "Starlette + pydantic by hand",
        "starlette,pydantic",
        "starlette_pydantic_app",
    ),
    typed_peer_spec("fastapi", "FastAPI", "fastapi,pydantic", "fastapi_app"),
    typed_peer_spec("litestar", "Litestar", "litestar,msgspec", "litestar_app"),
]
SERVER_NAMES = [
    *("floor", "bare", "trioframe", "trioframe-llhttp"),
    *("uvicorn-h11", "uvicorn-httptools", "granian", "granian-rust", "hypercorn"),
    *("starlette-pydantic", "fastapi", "litestar"),
]
#: Hypercorn and the typed peers (which need packages of their own) only when asked for.
ASKED_FOR_ONLY = {"hypercorn", "starlette-pydantic", "fastapi", "litestar"}
DEFAULT_SERVERS = [name for name in SERVER_NAMES if name not in ASKED_FOR_ONLY]


@dataclass
class Count:
    """What callgrind counted between a zero and a dump."""

    instructions: int
    seconds: float  # wall time between the two


@dataclass
class Measurement:
    """One count over ``requests`` requests."""

    count: Count
    requests: int

    @property
    def per_request(self) -> float:
        return self.count.instructions / self.requests


@dataclass
class ServerResult:
    label: str
    name: str  # the spec's name: "trioframe" for every checkout
    status: str = "ok"  # ok | skipped | failed
    detail: str = ""
    stop: str = ""
    endpoints: dict[str, list[Measurement]] = field(default_factory=dict)

    def per_request(self, endpoint: str) -> float | None:
        """The median over the rounds of instructions per request, None if not measured."""
        runs = self.endpoints.get(endpoint)
        return statistics.median(m.per_request for m in runs) if runs else None


@dataclass(frozen=True)
class Options:
    requests: int
    connections: int
    warmup: int
    rounds: int
    endpoints: list[Endpoint]
    request_timeout: float
    start_timeout: float
    profiles: Path | None


# --- the client -----------------------------------------------------------------------------


def request_bytes(endpoint: Endpoint, port: int) -> bytes:
    """The request wrk would send for this endpoint."""
    head = f"{endpoint.method} {endpoint.path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if endpoint.method == "GET":
        return (head + "\r\n").encode()
    head += f"Content-Type: {endpoint.body_type}\r\nContent-Length: {len(endpoint.body)}\r\n"
    return (head + "\r\n").encode() + endpoint.body


def take_response(buffer: bytearray) -> tuple[int, dict[str, str], bytes] | None:
    """Remove one whole response (Content-Length framed) from ``buffer`` and return its status,
    headers and body; None if the buffer does not hold a whole one yet."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    status_line, *lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    version, _, rest = status_line.partition(" ")
    status = rest[:3]
    size = headers.get("content-length", "")
    if version != "HTTP/1.1" or not status.isdigit() or not size.isdigit():
        raise ServerFailed(f"not a keep-alive, Content-Length response: {status_line!r} {headers}")
    if len(buffer) < end + 4 + int(size):
        return None
    body = bytes(buffer[end + 4 : end + 4 + int(size)])
    del buffer[: end + 4 + int(size)]
    return int(status), headers, body


class KeepAliveClient:
    """``connections`` keep-alive connections, each with at most one request in flight: a
    connection sends its next request when the response to the last one is complete."""

    def __init__(self, port: int, endpoint: Endpoint, connections: int, timeout: float) -> None:
        self.endpoint = endpoint
        self.request = request_bytes(endpoint, port)
        self.timeout = timeout
        self.selector = selectors.DefaultSelector()
        self.sockets: list[socket.socket] = []
        try:
            for _ in range(connections):
                sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.sockets.append(sock)
                self.selector.register(sock, selectors.EVENT_READ, bytearray())
        except BaseException:
            self.close()
            raise

    def run(self, requests: int) -> float:
        """Send exactly ``requests`` requests over the connections and check every response;
        returns the seconds it took. Fails if no response comes for ``timeout`` seconds."""
        started = time.monotonic()
        sent = done = 0
        for sock in self.sockets[:requests]:
            sock.sendall(self.request)
            sent += 1
        while done < requests:
            ready = self.selector.select(self.timeout)
            if not ready:
                raise ServerFailed(f"no response for {self.timeout:.0f} s ({done} done)")
            for key, _ in ready:
                conn, buffer = key.fileobj, key.data
                assert isinstance(conn, socket.socket)
                data = conn.recv(RECEIVE_SIZE)
                if not data:
                    raise ServerFailed(f"the server closed a connection after {done} responses")
                buffer += data
                if (response := take_response(buffer)) is None:
                    continue
                status, headers, body = response
                ctype = headers.get("content-type", "")
                if problem := self.endpoint.problem(status, ctype, body):
                    raise ServerFailed(f"{self.endpoint.method} {self.endpoint.path}: {problem}")
                if buffer or headers.get("connection", "").lower() == "close":
                    raise ServerFailed("the server closes connections or sends unasked bytes")
                done += 1
                if sent < requests:
                    conn.sendall(self.request)
                    sent += 1
        return time.monotonic() - started

    def close(self) -> None:
        self.selector.close()
        for sock in self.sockets:
            sock.close()


# --- the server under callgrind -------------------------------------------------------------


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of a process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_idle(pid: int, timeout: float = 60.0) -> None:
    """Wait until the process has used under a quarter of a core for half a second: the work
    behind the last response (e.g. reading the next request's first bytes) is done. (Not
    zero: a timer, like Uvicorn's 10 Hz one, takes a few per cent under callgrind.)"""
    window, deadline = 0.5, time.monotonic() + timeout
    allowed = 0.25 * window * os.sysconf("SC_CLK_TCK")
    before = cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(window)
        after = cpu_ticks(pid)
        if after - before <= allowed:
            return
        before = after
    raise ServerFailed(f"still busy {timeout:.0f} s after the last response")


RUNNING: set[subprocess.Popen[bytes]] = set()  # every server started and not yet stopped
RUNNING_LOCK = threading.Lock()


def kill_all_servers() -> None:
    """SIGKILL every server still running, whichever thread started it (on ctrl-c)."""
    with RUNNING_LOCK:
        for process in RUNNING:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


class Callgrind:
    """A server process under ``valgrind --tool=callgrind``, instrumentation off until asked,
    and the commands ``callgrind_control`` sends it."""

    def __init__(self, spec: ServerSpec, port: int, workdir: Path) -> None:
        self.workdir = workdir
        self.prefix = str(workdir / "vgdb")
        command = [
            *("valgrind", "--tool=callgrind", "--instr-atstart=no", f"--vgdb-prefix={self.prefix}"),
            f"--callgrind-out-file={workdir / 'callgrind.out'}",
            *spec.command(port),
        ]
        env = environment(spec.checkout, PYTHONHASHSEED="0")  # the same str hashes every run
        self.log_path = workdir / "server.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        with RUNNING_LOCK:
            RUNNING.add(self.process)
        self.dumps = 0

    def stop(self) -> str:
        """Stop the server (SIGTERM, then SIGKILL to its process group); how it ended."""
        how = stop_server(self.process, 30.0)
        with RUNNING_LOCK:
            RUNNING.discard(self.process)
        return how

    def control(self, *args: str) -> None:
        """Send one command (it takes about 0.3 s: vgdb interrupts the server to deliver it)."""
        proc = subprocess.run(
            ["callgrind_control", f"--vgdb-prefix={self.prefix}", *args, str(self.process.pid)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if proc.returncode != 0 or "OK." not in proc.stdout:
            raise ServerFailed(f"callgrind_control {' '.join(args)}: {proc.stdout}{proc.stderr}")

    def count(self, action: Callable[[], object]) -> Count:
        """Instructions the server executes during ``action()`` and until it is idle again.
        Instrumentation is on only for that: the warm-ups run several times faster."""
        wait_until_idle(self.process.pid)
        self.control("--instr=on")
        self.control("--zero")
        started = time.monotonic()
        action()
        wait_until_idle(self.process.pid)
        seconds = time.monotonic() - started
        self.control("--dump")
        self.control("--instr=off")
        self.dumps += 1
        return Count(self.last_dump_total(), seconds)

    @property
    def last_dump(self) -> Path:
        return self.workdir / f"callgrind.out.{self.dumps}"

    def last_dump_total(self) -> int:
        """The instructions (event Ir) counted from the zero to the last dump: its ``summary:``
        line. (Its ``totals:`` line, the sum of the cost lines, agrees to a few hundred when
        instrumentation was off before the zero, and comes out higher when it was on.)"""
        with self.last_dump.open() as dump:
            for line in dump:
                if line.startswith("summary:"):
                    return int(line.split()[1])
        raise ServerFailed(f"no summary line in {self.last_dump}")

    def log_tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return "\n".join("    | " + line for line in text)


def measure(label: str, port: int, ep: Endpoint, server: Callgrind, opts: Options) -> Measurement:
    """Warm up on fresh connections, then count ``opts.requests`` requests on the same ones
    (the connections' set-up and teardown are not counted)."""
    client = KeepAliveClient(port, ep, opts.connections, opts.request_timeout)
    try:
        client.run(opts.warmup)
        count = server.count(lambda: client.run(opts.requests))
    finally:
        client.close()
    if opts.profiles:
        shutil.copy(server.last_dump, opts.profiles / f"{label}.{ep.name}.{server.dumps}.callgrind")
    return Measurement(count, opts.requests)


def bench_server(spec: ServerSpec, opts: Options) -> ServerResult:
    result = ServerResult(spec.label, spec.name)
    ok, result.detail = probe(spec.probe, spec.checkout)
    if not ok:
        result.status = "skipped"
        return result
    port = free_port()
    print(f"[{spec.label}] {result.detail}: under callgrind on 127.0.0.1:{port}", flush=True)
    with tempfile.TemporaryDirectory(prefix="trioframe-callgrind-") as workdir:
        server = Callgrind(spec, port, Path(workdir))
        try:
            wait_for_port(server.process, port, opts.start_timeout)
            served = [ep for ep in [*ENDPOINTS, RECORD] if ep.name in spec.serves]
            check_endpoints(port, served)
            for ep in (ep for ep in opts.endpoints if ep.name in spec.serves):
                for round_ in range(opts.rounds):
                    m = measure(spec.label, port, ep, server, opts)
                    result.endpoints.setdefault(ep.name, []).append(m)
                    print(
                        f"[{spec.label}] {ep.method} {ep.path} round {round_ + 1}: "
                        f"{m.per_request / 1000:,.2f} k instructions/request "
                        f"({m.count.seconds:.0f} s)",
                        flush=True,
                    )
        except (ServerFailed, OSError) as exc:
            result.status = "failed"
            result.detail = f"{exc}\n{server.log_tail()}"
        finally:
            result.stop = server.stop()
    return result


# --- the report -----------------------------------------------------------------------------


def versions() -> str:
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    return f"{valgrind.stdout.strip()}, Python {sys.version.split()[0]} ({PY})"


def print_report(results: list[ServerResult], opts: Options, elapsed: float) -> None:
    print(
        f"\ncallgrind: {opts.requests} requests per count over {opts.connections} keep-alive "
        f"connections, after {opts.warmup} warm-up requests, {opts.rounds} round(s)\n{versions()}"
    )
    for r in results:
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.label:<18} {r.status:<8} {r.detail}{stop}")
    ran = [r for r in results if r.endpoints]
    if not ran:
        print("\nno server was measured")
        return
    bare = next((r for r in ran if r.name == "bare"), None)
    first = next((r for r in ran if r.name == "trioframe"), None)
    columns = [f"{'k instr/req':>12}"]
    if opts.rounds > 1:
        columns.append(f"{'spread':>7}")
    columns += [f"{'x bare':>7}", f"{'x ' + (first.label if first else 'trioframe'):>14}"]
    print(f"\n{'endpoint':<10} {'server':<18} " + " ".join(columns))
    for ep in opts.endpoints:
        label = ep.name  # on the endpoint's first row
        for r in ran:
            value = r.per_request(ep.name)
            if value is None:
                continue
            cells = [f"{value / 1000:>12,.1f}"]
            if opts.rounds > 1:
                runs = [m.per_request for m in r.endpoints[ep.name]]
                cells.append(f"{(max(runs) - min(runs)) / value:>7.2%}")
            for base, width in ((bare, 7), (first, 14)):
                other = base.per_request(ep.name) if base else None
                cells.append(f"{value / other:>{width}.3f}" if other else f"{'n/a':>{width}}")
            print(f"{label:<10} {r.label:<18} " + " ".join(cells))
            label = ""
    print(f"\nrun time {elapsed / 60:.1f} min")


def write_json(path: Path, results: list[ServerResult], opts: Options) -> None:
    report = {
        "versions": versions(),
        "requests": opts.requests,
        "connections": opts.connections,
        "warmup": opts.warmup,
        "rounds": opts.rounds,
        "endpoints": {ep.name: f"{ep.method} {ep.path}" for ep in opts.endpoints},
        "servers": [
            {
                "label": r.label,
                "name": r.name,
                "status": r.status,
                "detail": r.detail,
                "stop": r.stop,
                "instructions_per_request": {name: r.per_request(name) for name in r.endpoints},
                "rounds": {
                    name: [
                        {
                            "instructions": m.count.instructions,
                            "seconds": round(m.count.seconds, 2),
                            "requests": m.requests,
                        }
                        for m in runs
                    ]
                    for name, runs in r.endpoints.items()
                },
            }
            for r in results
        ],
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {path}")


# --- the command line -----------------------------------------------------------------------


def parse_args() -> tuple[argparse.Namespace, list[ServerSpec], Options]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000, help="requests counted (2000)")
    parser.add_argument("--connections", type=int, default=50, help="keep-alive connections (50)")
    parser.add_argument(
        "--warmup", type=int, default=500, help="requests before each count, same connections (500)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="counts per server and endpoint (1)")
    parser.add_argument(
        "--only",
        default=",".join(DEFAULT_SERVERS),
        help=f"comma-separated servers from {','.join(SERVER_NAMES)} (default: all but hypercorn and the typed peers)",
    )
    names = ",".join(ep.name for ep in [*ENDPOINTS, RECORD])
    parser.add_argument("--endpoints", default=names, help=f"comma-separated, from {names} (all)")
    add_option(parser)
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, len(os.sched_getaffinity(0))),
        help="servers measured at the same time (one per core: 2 here); counts do not change",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument(
        "--profiles", type=Path, help="keep every count's callgrind dump in this directory"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for any response (120)"
    )
    args = parser.parse_args()
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    if unknown := sorted(set(only) - set(SERVER_NAMES)):
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {SERVER_NAMES}")
    chosen = [name.strip() for name in args.endpoints.split(",") if name.strip()]
    if unknown := sorted(set(chosen) - {ep.name for ep in [*ENDPOINTS, RECORD]}):
        parser.error(f"unknown endpoint(s) {', '.join(unknown)}; choose from {names}")
    if args.requests < 1 or args.connections < 1 or args.warmup < 0 or args.rounds < 1:
        parser.error("--requests, --connections and --rounds must be >= 1, --warmup >= 0")
    try:
        checkouts = parse_checkouts(args.trioframe)
    except ValueError as exc:
        parser.error(str(exc))
    specs = []
    for name in SERVER_NAMES:
        if name not in only:
            continue
        if name == "trioframe":
            specs += [trioframe_spec(checkout) for checkout in checkouts]
        elif name == "trioframe-llhttp":
            specs += [trioframe_spec(checkout, "llhttp") for checkout in checkouts]
        else:
            specs += [spec for spec in OTHER_SERVERS if spec.name == name]
    opts = Options(
        requests=args.requests,
        connections=args.connections,
        warmup=args.warmup,
        rounds=args.rounds,
        endpoints=[ep for ep in [*ENDPOINTS, RECORD] if ep.name in chosen],
        request_timeout=args.timeout,
        start_timeout=180.0,
        profiles=args.profiles,
    )
    return args, specs, opts


def main() -> int:
    args, specs, opts = parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            print(f"{tool} not found on PATH (apt-get install valgrind)", file=sys.stderr)
            return 2
    if opts.profiles:
        opts.profiles.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the servers, as on ctrl-c
    started = time.monotonic()
    with ThreadPoolExecutor(min(args.jobs, len(specs)) or 1) as pool:
        try:
            results = list(pool.map(lambda spec: bench_server(spec, opts), specs))
        except KeyboardInterrupt:
            kill_all_servers()  # the threads' clients then fail at once and the threads end
            print("\ninterrupted: every server stopped", file=sys.stderr)
            return 130
    print_report(results, opts, time.monotonic() - started)
    if args.json:
        write_json(args.json, results, opts)
    return 0 if all(r.status != "failed" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
