#!/usr/bin/env python3
"""Serve the same small app from several servers, drive each with wrk, print a table.

    python bench/run.py [--duration 10] [--connections 50] [--only trioframe,bare] [--json out.json]
        [--trioframe base=/work/main --trioframe new=/work/wt/x] [--rounds 5]

Each server runs as one process on 127.0.0.1 on a free port (pinned to one core, wrk with
one thread on another) for the whole run. Each round measures every server once per
endpoint, in an order that changes from round to round; the table gives the median over the
rounds. See bench/README.md for what is measured and how to read the output.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import checkouts
from checkouts import PY, ROOT, TRIOFRAME_PROBE, Checkout, environment

BENCH = Path(__file__).resolve().parent
APPS = BENCH / "apps"
WRK_SCRIPT = BENCH / "wrk.lua"
ECHO_BYTES = 1024  # wrk.lua sends "x" * ECHO_BYTES (BENCH_BODY_BYTES)
ECHO_BODY = b"x" * ECHO_BYTES


class ServerFailed(Exception):
    """The server did not start, answered wrongly, or died under load."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str
    content_type: str
    expected: bytes  # compared as JSON values when content_type is application/json
    status: int = 200
    body: bytes = ECHO_BODY  # what a POST sends
    body_type: str = "application/octet-stream"

    def problem(self, status: int, content_type: str, body: bytes) -> str | None:
        """What is wrong with this response, or None if it is right."""
        if status != self.status:
            return f"status {status}, body {body[:80]!r}"
        if not content_type.startswith(self.content_type):
            return f"content-type {content_type!r}, expected {self.content_type}"
        if self.content_type == "application/json":
            try:
                if json.loads(body) == json.loads(self.expected):
                    return None
            except ValueError:
                pass
        elif body == self.expected:
            return None
        return f"body {body[:80]!r}, expected {self.expected[:80]!r}"


ENDPOINTS = [
    Endpoint("plaintext", "GET", "/plaintext", "text/plain", b"Hello, World!"),
    Endpoint("json", "GET", "/json", "application/json", b'{"message": "Hello, World!"}'),
    Endpoint("users", "GET", "/users/42", "application/json", b'{"id": 42, "name": "user42"}'),
    Endpoint("echo", "POST", "/echo", "application/octet-stream", ECHO_BODY),
]

#: What an API does: a 12-field record (a decimal, a datetime, a UUID, an enum, a date, a list,
#: a nested record, a null) read into typed classes, answered 201 with the record written back.
#: Every server writes these values in the spelling they arrive in.
RECORD_BODY = (
    b'{"id": "7b1e4c1e-1d7a-4b1a-9d5e-1a2b3c4d5e6f", "name": "widget", "sku": "W-1001", '
    b'"price": "12.50", "quantity": 3, "created_at": "2026-11-28T10:00:00+01:00", '
    b'"ship_on": "2026-12-01", "status": "shipped", "tags": ["blue", "small"], '
    b'"dimensions": {"width_mm": 120, "height_mm": 80, "weight_g": 450}, "note": null, '
    b'"priority": 2}'
)
RECORD = Endpoint(
    "record",
    "POST",
    "/record",
    "application/json",
    RECORD_BODY,
    201,
    RECORD_BODY,
    "application/json",
)


@dataclass(frozen=True)
class ServerSpec:
    name: str  # what --only selects
    description: str
    probe: str  # Python code run first: failure means "skipped", its output describes the server
    command: Callable[[int], list[str]]
    checkout: Checkout | None = None  # trioframe's: the directory first on PYTHONPATH

    @property
    def label(self) -> str:
        """The server's name in the table: for trioframe, its checkout's label (with the
        parser when it is not the default path's)."""
        if self.checkout is None:
            return self.name
        suffix = self.name.removeprefix("trioframe")
        return self.checkout.label + suffix


VERSIONS = "from importlib.metadata import version as v\n"
#: Starlette on Uvicorn, by --only name: its h11 and its httptools HTTP/1.1 (asyncio loop).
UVICORNS = [("uvicorn", "h11"), ("uvicorn-httptools", "httptools")]


def uvicorn_spec(name: str, http: str) -> ServerSpec:
    """Starlette on Uvicorn with the ``http`` implementation and the asyncio loop."""
    return ServerSpec(
        name,
        f"Starlette on Uvicorn ({http})",
        VERSIONS + f"import {http}, starlette\n"
        f"print('uvicorn', v('uvicorn'), '(http={http}', v('{http}') + ', loop=asyncio),',"
        " 'starlette', v('starlette'))",
        lambda port: [
            *(PY, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"),
            *("--http", http, "--loop", "asyncio", "--no-access-log", "--log-level", "warning"),
            "bench.apps.starlette_app:app",
        ],
    )


SERVERS = [
    ServerSpec(  # served once per checkout (--trioframe), this one by default
        "trioframe",
        "trioframe (h11)",
        TRIOFRAME_PROBE,
        lambda port: [PY, str(APPS / "trioframe_app.py"), str(port), "--http1-parser", "h11"],
    ),
    ServerSpec(  # the speedups extra: needs httptools, once per checkout too
        "trioframe-llhttp",
        "trioframe (llhttp, the speedups extra)",
        "import httptools\nfrom trioframe import ServerConfig\n"
        + TRIOFRAME_PROBE
        + "\nServerConfig(http1_parser='llhttp')",
        lambda port: [PY, str(APPS / "trioframe_app.py"), str(port), "--http1-parser", "llhttp"],
    ),
    ServerSpec(
        "bare",
        "bare trio + h11 loop",
        VERSIONS + "import h11, trio\nprint('trio', v('trio'), '+ h11', v('h11'))",
        lambda port: [PY, str(APPS / "bare_h11.py"), str(port)],
    ),
    ServerSpec(
        "hypercorn",
        "Starlette on Hypercorn (trio worker)",
        VERSIONS + "import hypercorn.trio, starlette\n"
        "print('hypercorn', v('hypercorn'), 'trio worker, starlette', v('starlette'))",
        # --workers 0 serves in this very process; --workers 1 would add a supervisor process.
        lambda port: [
            *(PY, "-m", "hypercorn", "--worker-class", "trio", "--workers", "0"),
            *("--bind", f"127.0.0.1:{port}", "bench.apps.starlette_app:app"),
        ],
    ),
    *(uvicorn_spec(name, http) for name, http in UVICORNS),
]
SERVER_NAMES = [spec.name for spec in SERVERS]
DESCRIPTIONS = {spec.name: spec.description for spec in SERVERS}


@dataclass
class LoadResult:
    requests: int
    duration_us: int
    p50_us: int
    p99_us: int
    max_us: int
    connect_errors: int
    read_errors: int
    write_errors: int
    timeouts: int
    status_errors: int
    capped: bool = False

    @property
    def rps(self) -> float:
        return self.requests / (self.duration_us / 1e6)

    @property
    def errors(self) -> int:
        return (
            self.connect_errors
            + self.read_errors
            + self.write_errors
            + self.timeouts
            + self.status_errors
        )


@dataclass
class ServerResult:
    label: str  # the name in the table
    name: str  # the server, as --only names it
    status: str = "ok"  # ok | skipped | failed
    detail: str = ""  # versions / implementation, or why it was skipped or failed
    stop: str = ""  # how the process ended after SIGTERM
    endpoints: dict[str, list[LoadResult]] = field(default_factory=dict)  # one per round

    def median_rps(self, endpoint: str) -> float | None:
        """The median over the rounds of the endpoint's req/s; None if it was not measured."""
        loads = self.endpoints.get(endpoint)
        return statistics.median(load.rps for load in loads) if loads else None


@dataclass(frozen=True)
class Options:
    duration: int
    warmup: int
    connections: int
    max_requests: int
    start_timeout: float
    stop_timeout: float
    server_cpu: int | None
    wrk_cpu: int | None
    rounds: int = 1


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: the working tree's trioframe comes first."""
    return environment(None, **extra)


def pin_to(cpu: int | None) -> Callable[[], None] | None:
    return None if cpu is None else lambda: os.sched_setaffinity(0, {cpu})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def probe(spec: ServerSpec) -> tuple[bool, str]:
    """Run the spec's probe; (False, why) when the server cannot run here."""
    return checkouts.probe(spec.probe, spec.checkout)


def wait_for_port(proc: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerFailed(f"exited with code {proc.returncode} before accepting connections")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise ServerFailed(f"not accepting connections on 127.0.0.1:{port} after {timeout:.0f} s")


def check_endpoints(port: int, endpoints: Sequence[Endpoint] = ENDPOINTS) -> None:
    """One plain request per endpoint, on one keep-alive connection, before any load."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        for ep in endpoints:
            body = ep.body if ep.method == "POST" else None
            headers = {"content-type": ep.body_type} if body else {}
            try:
                conn.request(ep.method, ep.path, body=body, headers=headers)
                resp = conn.getresponse()
                problem = ep.problem(resp.status, resp.getheader("content-type", ""), resp.read())
            except (OSError, http.client.HTTPException) as exc:
                problem = repr(exc)
            if problem:
                raise ServerFailed(f"{ep.method} {ep.path}: {problem}")
    finally:
        conn.close()


def run_wrk(port: int, ep: Endpoint, seconds: int, opts: Options) -> LoadResult:
    env = subprocess_env(BENCH_MAX_REQUESTS=str(opts.max_requests))
    if ep.method == "POST":
        env["BENCH_BODY_BYTES"] = str(ECHO_BYTES)
    command = [
        *("wrk", "-t1", f"-c{opts.connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"),
        *("-s", str(WRK_SCRIPT), f"http://127.0.0.1:{port}{ep.path}"),
    ]
    proc = subprocess.run(
        command,
        env=env,
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        preexec_fn=pin_to(opts.wrk_cpu),
    )
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            result = LoadResult(**json.loads(line.removeprefix("BENCH_RESULT ")))
            result.capped = result.requests >= opts.max_requests
            return result
    raise ServerFailed(f"wrk exited {proc.returncode} without a result: {proc.stderr.strip()}")


def stop_server(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """SIGTERM, then SIGKILL (to the whole process group) if it does not exit in time."""
    how = ""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            how = f"killed: still running {timeout:.0f} s after SIGTERM; "
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the server's own session: leftovers, if any
    code = proc.wait()
    if code < 0:
        return how + f"ended by {signal.Signals(-code).name}"
    return how + f"exit {code}"


@contextlib.contextmanager
def one_app(app: Path, opts: Options) -> Iterator[int]:
    """Serve ``app`` (a script taking its port as argv) as one pinned process; yields the port
    and stops the process on exit. For the single-server scripts (extract.py, middleware.py)."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [PY, str(app), str(port)],
            env=subprocess_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=pin_to(opts.server_cpu),
        )
        try:
            wait_for_port(proc, port, opts.start_timeout)
            yield port
        finally:
            stop_server(proc, opts.stop_timeout)


def single_server_options(description: str) -> Options:
    """Parse ``--duration`` and ``--connections`` for a single-server script; the server goes
    on CPU 0, wrk on CPU 1."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    args = parser.parse_args()
    return Options(args.duration, 2, args.connections, 10_000_000, 15.0, 10.0, 0, 1)


def requests_per_second(result: LoadResult) -> float:
    return result.requests / (result.duration_us / 1e6)


@dataclass
class Served:
    """One server's process, kept for the whole run, and its result."""

    spec: ServerSpec
    result: ServerResult
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def serving(self) -> bool:
        return self.process is not None and self.result.status == "ok"

    def stop(self, opts: Options) -> None:
        if self.process is not None and not self.result.stop:
            self.result.stop = stop_server(self.process, opts.stop_timeout)

    def fail(self, exc: ServerFailed, opts: Options) -> None:
        """Mark the server failed, with the tail of its log, and stop it."""
        self.result.status = "failed"
        log_lines = self.log_path.read_text(errors="replace").strip().splitlines()[-15:]
        self.result.detail = "\n".join([str(exc), *("    | " + line for line in log_lines)])
        self.stop(opts)


def launch(
    command: list[str], checkout: Checkout | None, log_path: Path, cpu: int | None
) -> subprocess.Popen[bytes]:
    """Start a server process in its own session, its output in ``log_path``, pinned to
    ``cpu``, with trioframe from ``checkout`` (this checkout's without one)."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=environment(checkout),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=pin_to(cpu),
        )


def start_server(spec: ServerSpec, opts: Options, log_path: Path) -> Served:
    """Probe, start, check and warm up one server; a failure is recorded in its result."""
    served = Served(spec, ServerResult(spec.label, spec.name), log_path)
    ok, served.result.detail = probe(spec)
    if not ok:
        served.result.status = "skipped"
        return served
    served.port = port = free_port()
    print(f"[{spec.label}] {served.result.detail}: serving on 127.0.0.1:{port}", flush=True)
    served.process = launch(spec.command(port), spec.checkout, log_path, opts.server_cpu)
    try:
        wait_for_port(served.process, port, opts.start_timeout)
        check_endpoints(port)
        if opts.warmup:
            run_wrk(port, ENDPOINTS[0], opts.warmup, opts)
    except ServerFailed as exc:
        served.fail(exc, opts)
    except BaseException:
        served.stop(opts)
        raise
    return served


def measure(served: Served, ep: Endpoint, round_index: int, opts: Options) -> None:
    """One wrk run on one endpoint, added to the server's rounds."""
    assert served.process is not None
    try:
        load = run_wrk(served.port, ep, opts.duration, opts)
        served.result.endpoints.setdefault(ep.name, []).append(load)
        if served.process.poll() is not None:
            raise ServerFailed(f"died under load (exit code {served.process.returncode})")
    except ServerFailed as exc:
        served.fail(exc, opts)
        return
    which = f"round {round_index + 1}/{opts.rounds} " if opts.rounds > 1 else ""
    print(f"[{served.spec.label}] {which}{ep.method} {ep.path}: {load.rps:,.0f} req/s", flush=True)
    time.sleep(0.5)  # let the closed connections drain


Item = TypeVar("Item")


def round_order(servers: list[Item], round_index: int) -> list[Item]:
    """The order of the servers in a round: as given in the first, reversed in the second,
    starting from the second server in the third, that reversed in the fourth, and so on.
    Over the rounds each server runs first and last as often as the others, and of any two
    servers each runs before the other about half the time."""
    shift = (round_index // 2) % len(servers) if servers else 0
    order = servers[shift:] + servers[:shift]
    return order[::-1] if round_index % 2 else order


def bench_servers(specs: list[ServerSpec], opts: Options, log_dir: Path) -> list[ServerResult]:
    """Start every server, then measure them in rounds; stop them all in the end."""
    servers: list[Served] = []
    try:
        for index, spec in enumerate(specs):
            servers.append(start_server(spec, opts, log_dir / f"{index}-{spec.name}.log"))
        for round_index in range(opts.rounds):
            order = round_order(servers, round_index)
            for ep in ENDPOINTS:
                for served in order:
                    if served.serving:
                        measure(served, ep, round_index, opts)
    finally:
        for served in servers:
            served.stop(opts)
    return [served.result for served in servers]


def print_report(results: list[ServerResult], baseline: str, opts: Options) -> None:
    pinning = (
        f"server on CPU {opts.server_cpu}, wrk on CPU {opts.wrk_cpu}"
        if opts.server_cpu is not None
        else "no CPU pinning"
    )
    rounds = f", {opts.rounds} rounds in alternating order" if opts.rounds > 1 else ""
    print(
        f"\nwrk: 1 thread, {opts.connections} connections, {opts.duration} s per endpoint"
        f"{rounds}; {pinning}"
    )
    width = max([10, *(len(r.label) for r in results)])
    for r in results:
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.label:<{width}} {r.status:<8} {DESCRIPTIONS[r.name]}{stop}: {r.detail}")

    ran = [r for r in results if r.endpoints]
    if not ran:
        print("\nno server was benchmarked")
        return
    base = next((r for r in ran if r.label == baseline), None)
    several = opts.rounds > 1
    head = f"\n{'endpoint':<10} {'server':<{width}} {'req/s':>10}"
    head += f" {'min-max':>15}" if several else ""
    head += f" {'p99 ms':>8} {'x ' + baseline:>12}"
    head += f" {'per round':>11}" if several else ""
    print(head + "  errors")
    for ep in ENDPOINTS:
        for i, r in enumerate(ran):
            loads = r.endpoints.get(ep.name)
            if not loads:
                continue
            rps = statistics.median(load.rps for load in loads)
            p99 = statistics.median(load.p99_us for load in loads) / 1000
            base_loads = base.endpoints.get(ep.name, []) if base else []
            ratio = "n/a"
            if base_loads:
                ratio = f"{rps / statistics.median(load.rps for load in base_loads):.2f}"
            row = f"{ep.name if i == 0 else '':<10} {r.label:<{width}} {rps:>10,.0f}"
            if several:
                low, high = min(load.rps for load in loads), max(load.rps for load in loads)
                row += f" {f'{low:,.0f}-{high:,.0f}':>15}"
            row += f" {p99:>8.2f} {ratio:>12}"
            if several:
                row += f" {round_ratios(loads, base_loads):>11}"
            errors = sum(load.errors for load in loads)
            capped = " (request cap reached)" if any(load.capped for load in loads) else ""
            print(f"{row}  {errors}{capped}")

    for r in ran:
        if r.name in TARGETS:
            print_targets(r, ran)


def round_ratios(loads: list[LoadResult], base_loads: list[LoadResult]) -> str:
    """The lowest and highest of each round's req/s over the baseline's in the same round."""
    ratios = [load.rps / base.rps for load, base in zip(loads, base_loads, strict=False)]
    return f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "n/a"


#: trioframe's req/s >= target x theirs, for each trioframe server (the speedups extra is
#: held to Uvicorn on the same C parser).
TARGETS = {
    "trioframe": {"bare": 0.85, "hypercorn": 5.0, "uvicorn": 1.0},
    "trioframe-llhttp": {"uvicorn-httptools": 1.0},
}


def print_targets(trioframe: ServerResult, ran: list[ServerResult]) -> None:
    targets = TARGETS[trioframe.name]
    print(f"\ntargets ({trioframe.label} req/s / other server's req/s):")
    for r in ran:
        if r.name not in targets:
            continue
        cells = []
        for ep in ENDPOINTS:
            ours, theirs = trioframe.median_rps(ep.name), r.median_rps(ep.name)
            if ours is not None and theirs is not None:
                ratio = ours / theirs
                mark = "ok" if ratio >= targets[r.name] else "MISS"
                cells.append(f"{ep.name} {ratio:.2f} {mark}")
        print(f"  vs {r.name:<10} (>= {targets[r.name]:.2f}x): " + ", ".join(cells))


def parse_args() -> tuple[argparse.Namespace, list[ServerSpec]]:
    """The options, and the servers to run in order (trioframe once per checkout)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=10, help="seconds of load per endpoint")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up per server")
    parser.add_argument("--connections", type=int, default=50, help="wrk connections")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="times every server is measured on every endpoint; the table gives the median",
    )
    parser.add_argument(
        "--only",
        default=",".join(SERVER_NAMES),
        help=f"comma-separated servers to run, from {','.join(SERVER_NAMES)} (default: all)",
    )
    checkouts.add_option(parser)
    parser.add_argument(
        "--baseline",
        help="server the ratio columns divide by, a name or a --trioframe label "
        "(default: the first trioframe)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument(
        "--max-requests",
        type=int,
        default=10_000_000,
        help="hard cap on requests per wrk run, on top of --duration",
    )
    parser.add_argument("--no-pin", action="store_true", help="do not pin server and wrk to CPUs")
    args = parser.parse_args()
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(SERVER_NAMES))
    if unknown:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {SERVER_NAMES}")
    if args.duration < 1 or args.connections < 1 or args.warmup < 0 or args.rounds < 1:
        parser.error("--duration, --connections and --rounds must be >= 1, --warmup >= 0")
    try:
        trioframes = checkouts.parse_checkouts(args.trioframe)
    except ValueError as exc:
        parser.error(str(exc))
    specs = []
    for spec in SERVERS:
        if spec.name.startswith("trioframe") and spec.name in args.only:
            specs += [replace(spec, checkout=checkout) for checkout in trioframes]
        elif spec.name in args.only:
            specs.append(spec)
    labels = [spec.label for spec in specs]
    if len(set(labels)) != len(labels):
        parser.error(f"a --trioframe label is also a server's name: {labels}")
    if args.baseline is None:
        args.baseline = next((s.label for s in specs if s.name == "trioframe"), "trioframe")
    elif args.baseline not in labels:
        parser.error(f"--baseline {args.baseline} is not one of the servers run: {labels}")
    return args, specs


def main() -> int:
    args, specs = parse_args()
    if shutil.which("wrk") is None:
        print("wrk not found on PATH (apt-get install wrk)", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0))
    pin = not args.no_pin and len(cpus) >= 2
    opts = Options(
        duration=args.duration,
        warmup=args.warmup,
        connections=args.connections,
        max_requests=args.max_requests,
        start_timeout=20.0,
        stop_timeout=10.0,
        server_cpu=cpus[0] if pin else None,
        wrk_cpu=cpus[1] if pin else None,
        rounds=args.rounds,
    )
    minutes = len(specs) * len(ENDPOINTS) * args.rounds * (args.duration + 0.5) / 60
    print(f"{len(specs)} server(s), {args.rounds} round(s): about {minutes:.0f} min of load")
    with tempfile.TemporaryDirectory(prefix="trioframe-bench-") as log_dir:
        results = bench_servers(specs, opts, Path(log_dir))
    print_report(results, args.baseline, opts)
    if args.json:
        report = {
            "options": asdict(opts),
            "baseline": args.baseline,
            "endpoints": {ep.name: f"{ep.method} {ep.path}" for ep in ENDPOINTS},
            "servers": [
                {
                    **asdict(r),
                    "endpoints": {
                        name: {
                            "rps": round(statistics.median(load.rps for load in loads), 1),
                            "rounds": [
                                {**asdict(load), "rps": round(load.rps, 1)} for load in loads
                            ],
                        }
                        for name, loads in r.endpoints.items()
                    },
                }
                for r in results
            ],
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nresults written to {args.json}")
    return 0 if all(r.status != "failed" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
