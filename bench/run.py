#!/usr/bin/env python3
"""Serve the same small app from several servers, drive each with wrk, print a table.

    python bench/run.py [--duration 10] [--connections 50] [--only trioframe,bare] [--json out.json]

Each server runs as one process on 127.0.0.1 on a free port (pinned to one core, wrk with
one thread on another). See bench/README.md for what is measured and how to read the output.
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
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
APPS = BENCH / "apps"
WRK_SCRIPT = BENCH / "wrk.lua"
PY = sys.executable
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

    def problem(self, status: int, content_type: str, body: bytes) -> str | None:
        """What is wrong with this response, or None if it is right."""
        if status != 200:
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


@dataclass(frozen=True)
class ServerSpec:
    name: str
    label: str
    probe: str  # Python code run first: failure means "skipped", its output describes the server
    command: Callable[[int], list[str]]


VERSIONS = "from importlib.metadata import version as v\n"
SERVERS = [
    ServerSpec(
        "trioframe",
        "trioframe",
        "import trioframe\nfrom trioframe import Request, Response, Router, Server\n"
        "print('trioframe', getattr(trioframe, '__version__', '?'), 'from', trioframe.__path__[0])",
        lambda port: [PY, str(APPS / "trioframe_app.py"), str(port)],
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
    ServerSpec(
        "uvicorn",
        "Starlette on Uvicorn",
        VERSIONS + "import importlib.util, starlette\n"
        "from uvicorn.protocols.http.auto import AutoHTTPProtocol as P\n"
        "http = 'httptools' if 'httptools' in P.__module__ else 'h11'\n"
        "loop = 'uvloop' if importlib.util.find_spec('uvloop') else 'asyncio'\n"
        "print('uvicorn', v('uvicorn'), f'(http={http}, loop={loop}), starlette', v('starlette'))",
        lambda port: [
            *(PY, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"),
            *("--no-access-log", "--log-level", "warning", "bench.apps.starlette_app:app"),
        ],
    ),
]
SERVER_NAMES = [spec.name for spec in SERVERS]
LABELS = {spec.name: spec.label for spec in SERVERS}


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
    name: str
    status: str = "ok"  # ok | skipped | failed
    detail: str = ""  # versions / implementation, or why it was skipped or failed
    stop: str = ""  # how the process ended after SIGTERM
    endpoints: dict[str, LoadResult] = field(default_factory=dict)


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


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: the working tree's trioframe comes first."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def pin_to(cpu: int | None) -> Callable[[], None] | None:
    return None if cpu is None else lambda: os.sched_setaffinity(0, {cpu})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def probe(spec: ServerSpec) -> tuple[bool, str]:
    proc = subprocess.run(
        [PY, "-c", spec.probe],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = (proc.stdout if proc.returncode == 0 else proc.stderr).strip().splitlines()
    return proc.returncode == 0, lines[-1] if lines else f"probe exited {proc.returncode}"


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


def check_endpoints(port: int) -> None:
    """One plain request per endpoint, on one keep-alive connection, before any load."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        for ep in ENDPOINTS:
            body = ECHO_BODY if ep.method == "POST" else None
            headers = {"content-type": "application/octet-stream"} if body else {}
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


def bench_server(spec: ServerSpec, opts: Options, log_dir: Path) -> ServerResult:
    result = ServerResult(spec.name)
    ok, result.detail = probe(spec)
    if not ok:
        result.status = "skipped"
        return result
    port = free_port()
    log_path = log_dir / f"{spec.name}.log"
    print(f"[{spec.name}] {result.detail}: serving on 127.0.0.1:{port}", flush=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            spec.command(port),
            cwd=ROOT,
            env=subprocess_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=pin_to(opts.server_cpu),
        )
    try:
        wait_for_port(proc, port, opts.start_timeout)
        check_endpoints(port)
        if opts.warmup:
            run_wrk(port, ENDPOINTS[0], opts.warmup, opts)
        for ep in ENDPOINTS:
            print(f"[{spec.name}] {ep.method} {ep.path} for {opts.duration} s", flush=True)
            result.endpoints[ep.name] = run_wrk(port, ep, opts.duration, opts)
            if proc.poll() is not None:
                raise ServerFailed(f"died under load (exit code {proc.returncode})")
            time.sleep(0.5)  # let the closed connections drain
    except ServerFailed as exc:
        result.status = "failed"
        log_lines = log_path.read_text(errors="replace").strip().splitlines()[-15:]
        result.detail = "\n".join([str(exc), *("    | " + line for line in log_lines)])
    finally:
        result.stop = stop_server(proc, opts.stop_timeout)
    return result


def print_report(results: list[ServerResult], baseline: str, opts: Options) -> None:
    pinning = (
        f"server on CPU {opts.server_cpu}, wrk on CPU {opts.wrk_cpu}"
        if opts.server_cpu is not None
        else "no CPU pinning"
    )
    print(
        f"\nwrk: 1 thread, {opts.connections} connections, {opts.duration} s per endpoint; {pinning}"
    )
    for r in results:
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.name:<10} {r.status:<8} {LABELS[r.name]}{stop}: {r.detail}")

    ran = [r for r in results if r.endpoints]
    if not ran:
        print("\nno server was benchmarked")
        return
    base = next((r for r in ran if r.name == baseline), None)
    print(
        f"\n{'endpoint':<10} {'server':<10} {'req/s':>10} {'p99 ms':>8} {'x ' + baseline:>12}  errors"
    )
    for ep in ENDPOINTS:
        for i, r in enumerate(ran):
            load = r.endpoints.get(ep.name)
            if load is None:
                continue
            ratio = "n/a"
            if base is not None and ep.name in base.endpoints:
                ratio = f"{load.rps / base.endpoints[ep.name].rps:.2f}"
            notes = str(load.errors) + (" (request cap reached)" if load.capped else "")
            label = ep.name if i == 0 else ""
            print(
                f"{label:<10} {r.name:<10} {load.rps:>10,.0f} {load.p99_us / 1000:>8.2f} "
                f"{ratio:>12}  {notes}"
            )

    if base is not None and base.name == "trioframe":
        print_targets(base, ran)


TARGETS = {"bare": 0.85, "hypercorn": 5.0, "uvicorn": 1.0}  # trioframe req/s >= target x theirs


def print_targets(trioframe: ServerResult, ran: list[ServerResult]) -> None:
    print("\ntargets (trioframe req/s / other server's req/s):")
    for r in ran:
        if r.name not in TARGETS:
            continue
        cells = []
        for ep in ENDPOINTS:
            if ep.name in r.endpoints and ep.name in trioframe.endpoints:
                ratio = trioframe.endpoints[ep.name].rps / r.endpoints[ep.name].rps
                mark = "ok" if ratio >= TARGETS[r.name] else "MISS"
                cells.append(f"{ep.name} {ratio:.2f} {mark}")
        print(f"  vs {r.name:<10} (>= {TARGETS[r.name]:.2f}x): " + ", ".join(cells))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=10, help="seconds of load per endpoint")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up per server")
    parser.add_argument("--connections", type=int, default=50, help="wrk connections")
    parser.add_argument(
        "--only",
        default=",".join(SERVER_NAMES),
        help=f"comma-separated servers to run, from {','.join(SERVER_NAMES)} (default: all)",
    )
    parser.add_argument(
        "--baseline", default="trioframe", help="server the ratio column divides by"
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
    if args.duration < 1 or args.connections < 1 or args.warmup < 0:
        parser.error("--duration and --connections must be >= 1, --warmup >= 0")
    return args


def main() -> int:
    args = parse_args()
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
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="trioframe-bench-") as log_dir:
        for spec in SERVERS:
            if spec.name in args.only:
                results.append(bench_server(spec, opts, Path(log_dir)))
    print_report(results, args.baseline, opts)
    if args.json:
        report = {
            "options": asdict(opts),
            "endpoints": {ep.name: f"{ep.method} {ep.path}" for ep in ENDPOINTS},
            "servers": [
                {
                    **asdict(r),
                    "endpoints": {
                        name: {**asdict(load), "rps": round(load.rps, 1)}
                        for name, load in r.endpoints.items()
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
