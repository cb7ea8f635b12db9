#!/usr/bin/env python3
"""HTTP/2 throughput: trioframe's HTTP/2 against Hypercorn's and against its own HTTP/1.1, with h2load.

    python bench/http2.py [--duration 5] [--rounds 3] [--connections 10] [--streams 10]
        [--only trioframe-h2,hypercorn-h2,trioframe-h1] [--json out.json]
        [--trioframe base=/work/main --trioframe new=/work/wt/x]

Every server runs as one process on 127.0.0.1 on a free port, pinned to one core (h2load,
one thread, on another) for the whole run, and serves the four endpoints of bench/run.py:

    trioframe-h2   apps/trioframe_app.py --http2: h2c with prior knowledge
    hypercorn-h2   apps/starlette_app.py on Hypercorn's trio worker, h2c with prior knowledge
    trioframe-h1   apps/trioframe_app.py over HTTP/1.1 (h2load --h1), one request in flight
                   per connection (no pipelining)

Each round measures every server once per endpoint, in an order that changes from round to
round; the table gives the medians. Every h2load run is bounded by a request count, sized from
the server's last measured rate to last about ``--duration`` seconds (see ``h2load_command``).
See bench/README.md for how to read the output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import checkouts
from checkouts import PY, TRIOFRAME_PROBE, Checkout
from run import (  # the sibling script is the library here
    APPS,
    ECHO_BODY,
    ENDPOINTS,
    VERSIONS,
    Endpoint,
    ServerFailed,
    check_endpoints,
    free_port,
    launch,
    pin_to,
    round_order,
    stop_server,
    wait_for_port,
)

#: trioframe closes a connection after ``max_requests_per_connection`` requests (1000 by
#: default), with GOAWAY on HTTP/2. h2load (1.52) does not open a new connection after a
#: GOAWAY: the rest of that connection's requests fail. Both trioframe servers here lift the
#: limit, so that they run with the same settings and like Hypercorn, which has no such limit.
UNLIMITED = 1_000_000_000

#: trioframe must have HTTP/2 (``ServerConfig(http2=True)`` and the h2 package); the last line
#: printed is where trioframe came from, which ``checkouts.probe`` checks.
TRIOFRAME_H2_PROBE = (
    "import h2\nfrom trioframe import ServerConfig\nServerConfig(http2=True)\n" + TRIOFRAME_PROBE
)
HYPERCORN_PROBE = (
    VERSIONS + "import h2, hypercorn.trio, starlette\n"
    "print('hypercorn', v('hypercorn'), 'trio worker, h2', v('h2'), ', starlette', v('starlette'))"
)


@dataclass(frozen=True)
class H2Spec:
    """One server and the protocol it is measured with."""

    name: str  # what --only selects
    protocol: str  # "h2" or "h1"
    description: str
    probe: str
    command: Callable[[int], list[str]]
    checkout: Checkout | None = None

    @property
    def label(self) -> str:
        """The name in the table: for trioframe, its checkout's label and the protocol."""
        if self.checkout is None:
            return self.name
        return f"{self.checkout.label}-{self.protocol}"


def trioframe_command(*options: str) -> Callable[[int], list[str]]:
    def command(port: int) -> list[str]:
        return [
            *(PY, str(APPS / "trioframe_app.py"), str(port), *options),
            *("--max-requests-per-connection", str(UNLIMITED)),
        ]

    return command


SERVERS = [
    H2Spec(
        "trioframe-h2",
        "h2",
        "trioframe, HTTP/2 (h2c prior knowledge)",
        TRIOFRAME_H2_PROBE,
        trioframe_command("--http2"),
    ),
    H2Spec(
        "hypercorn-h2",
        "h2",
        "Starlette on Hypercorn (trio worker), HTTP/2 (h2c prior knowledge)",
        HYPERCORN_PROBE,
        # --workers 0 serves in this very process; --workers 1 would add a supervisor process.
        lambda port: [
            *(PY, "-m", "hypercorn", "--worker-class", "trio", "--workers", "0"),
            *("--bind", f"127.0.0.1:{port}", "bench.apps.starlette_app:app"),
        ],
    ),
    H2Spec(
        "trioframe-h1",
        "h1",
        "trioframe, HTTP/1.1 (no pipelining)",
        TRIOFRAME_PROBE,
        trioframe_command(),
    ),
]
SERVER_NAMES = [spec.name for spec in SERVERS]
#: trioframe-h2's median req/s over the other server's, per endpoint, must reach these.
TARGETS = {"hypercorn-h2": 3.0, "trioframe-h1": 0.8}


@dataclass
class H2Load:
    """One h2load measurement."""

    requests: int  # completed
    seconds: float  # h2load's "finished in": from the first connection to the last response
    failed: int  # h2load's failed + errored + timeout
    non_2xx: int  # 3xx, 4xx and 5xx responses
    mean_us: int  # h2load's mean time for request
    p50_us: int  # from h2load's --log-file
    p99_us: int
    server_cpu_seconds: float | None = None  # from /proc, where there is one

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def errors(self) -> int:
        return self.failed + self.non_2xx


@dataclass
class Result:
    label: str
    name: str
    status: str = "ok"  # ok | skipped | failed
    detail: str = ""
    stop: str = ""
    endpoints: dict[str, list[H2Load]] = field(default_factory=dict)  # one per round

    def median_rps(self, endpoint: str) -> float | None:
        loads = self.endpoints.get(endpoint)
        return statistics.median(load.rps for load in loads) if loads else None


@dataclass(frozen=True)
class Options:
    duration: int
    warmup: int  # requests
    connections: int
    streams: int
    h1_connections: int
    server_cpu: int | None
    client_cpu: int | None
    rounds: int
    start_timeout: float = 20.0
    stop_timeout: float = 10.0


# -- h2load ------------------------------------------------------------------------------------
_UNIT_US = {"us": 1, "ms": 1000, "s": 1_000_000}
_REQUESTS = re.compile(
    r"^requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, "
    r"(\d+) errored, (\d+) timeout",
    re.MULTILINE,
)
_STATUSES = re.compile(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", re.MULTILINE)
_MEAN = re.compile(r"^time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)\s", re.MULTILINE)
_FINISHED = re.compile(r"^finished in ([\d.]+)(us|ms|s),", re.MULTILINE)


# Why every h2load run is bounded by a request count (-n) and not by time (-D): at the end of
# a -D run h2load closes its connections with streams still in flight, and Hypercorn's trio
# worker (0.18.0) then fails with trio.BusyResourceError ("another task is currently sending
# data on this SocketStream": its connection close sends EOF while a stream task is sending),
# logs "Error in ASGI Framework" and may exit. With -n, h2load closes its connections only
# when every response has arrived. The same method is used for every server.
def h2load_command(spec: H2Spec, port: int, ep: Endpoint, count: int, opts: Options) -> list[str]:
    """h2load, one thread, ``count`` requests to one endpoint: ``--connections`` x
    ``--streams`` over h2c, or ``--h1-connections`` with one request in flight each."""
    if spec.protocol == "h2":
        shape = [f"-c{opts.connections}", f"-m{opts.streams}"]
    else:
        shape = ["--h1", f"-c{opts.h1_connections}", "-m1"]
    command = ["h2load", "-t1", *shape, f"-n{count}"]
    if ep.method == "POST":
        command += ["-d", str(body_file()), "-H", f"content-type: {ep.content_type}"]
    return [*command, f"http://127.0.0.1:{port}{ep.path}"]


def body_file() -> Path:
    """The file h2load POSTs to /echo: the 1 KiB body bench/run.py sends."""
    path = Path(tempfile.gettempdir()) / f"trioframe-bench-http2-body-{len(ECHO_BODY)}"
    if not path.exists() or path.read_bytes() != ECHO_BODY:
        path.write_bytes(ECHO_BODY)
    return path


def run_h2load(
    spec: H2Spec, port: int, ep: Endpoint, count: int, opts: Options, timeout: float
) -> H2Load:
    """Run h2load; read its summary, and the latency percentiles from its per-request log
    (``--log-file``: one line per completed request, the third column its microseconds)."""
    with tempfile.TemporaryDirectory(prefix="trioframe-h2load-") as tmp:
        log = Path(tmp) / "requests.tsv"
        command = h2load_command(spec, port, ep, count, opts)
        proc = subprocess.run(
            [*command[:-1], f"--log-file={log}", command[-1]],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=pin_to(opts.client_cpu),
        )
        out = proc.stdout
        requests, statuses = _REQUESTS.search(out), _STATUSES.search(out)
        mean, finished = _MEAN.search(out), _FINISHED.search(out)
        if proc.returncode != 0 or not (requests and statuses and mean and finished):
            raise ServerFailed(f"h2load exited {proc.returncode}: {(out + proc.stderr)[-600:]}")
        rows = log.read_text().splitlines() if log.exists() else []
    latencies = sorted(int(row.split("\t")[2]) for row in rows if row.count("\t") >= 2)
    done, failed, errored, timeouts = (int(n) for n in requests.groups())

    def percentile(q: float) -> int:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0

    return H2Load(
        requests=done,
        seconds=float(finished.group(1)) * _UNIT_US[finished.group(2)] / 1e6,
        failed=failed + errored + timeouts,
        non_2xx=sum(int(n) for n in statuses.groups()[1:]),
        mean_us=round(float(mean.group(1)) * _UNIT_US[mean.group(2)]),
        p50_us=percentile(0.50),
        p99_us=percentile(0.99),
    )


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` from ``/proc`` (``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- checking the answers over HTTP/2 ------------------------------------------------------------
@dataclass
class Answer:
    endpoint: Endpoint
    status: int = 0
    content_type: str = ""
    body: bytearray = field(default_factory=bytearray)
    ended: bool = False


def check_endpoints_h2(port: int, timeout: float = 5.0) -> None:
    """One request per endpoint, all on one h2c connection (prior knowledge), before any load:
    status, content type and body, as bench/run.py checks them over HTTP/1.1."""
    import h2.config
    import h2.connection
    import h2.events

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    answers: dict[int, Answer] = {}
    for ep in ENDPOINTS:
        stream_id = conn.get_next_available_stream_id()
        headers = [(":method", ep.method), (":scheme", "http")]
        headers += [(":authority", f"127.0.0.1:{port}"), (":path", ep.path)]
        if ep.method == "POST":
            headers += [("content-type", ep.content_type), ("content-length", str(len(ECHO_BODY)))]
            conn.send_headers(stream_id, headers)
            conn.send_data(stream_id, ECHO_BODY, end_stream=True)
        else:
            conn.send_headers(stream_id, headers, end_stream=True)
        answers[stream_id] = Answer(ep)
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(conn.data_to_send())
        while not all(answer.ended for answer in answers.values()):
            if time.monotonic() > deadline:
                raise ServerFailed(f"HTTP/2: no complete answers after {timeout:.0f} s")
            data = sock.recv(65536)
            if not data:
                raise ServerFailed("HTTP/2: the server closed the connection")
            for event in conn.receive_data(data):
                answer = answers.get(getattr(event, "stream_id", 0) or 0)
                if isinstance(event, h2.events.ConnectionTerminated):
                    raise ServerFailed(f"HTTP/2: GOAWAY ({event.error_code!r})")
                if answer is None:
                    continue
                if isinstance(event, h2.events.ResponseReceived):
                    fields = {bytes(k).lower(): bytes(v) for k, v in event.headers or []}
                    answer.status = int(fields.get(b":status", b"0"))
                    answer.content_type = fields.get(b"content-type", b"").decode()
                elif isinstance(event, h2.events.DataReceived):
                    answer.body += event.data or b""
                    size = event.flow_controlled_length or 0
                    conn.acknowledge_received_data(size, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    answer.ended = True
                elif isinstance(event, h2.events.StreamReset):
                    ep = answer.endpoint
                    raise ServerFailed(
                        f"HTTP/2 {ep.method} {ep.path}: reset ({event.error_code!r})"
                    )
            sock.sendall(conn.data_to_send())
    for answer in answers.values():
        ep = answer.endpoint
        problem = ep.problem(answer.status, answer.content_type, bytes(answer.body))
        if problem:
            raise ServerFailed(f"HTTP/2 {ep.method} {ep.path}: {problem}")


# -- the servers --------------------------------------------------------------------------------
@dataclass
class Served:
    """One server's process, kept for the whole run, and its result."""

    spec: H2Spec
    result: Result
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def serving(self) -> bool:
        return self.process is not None and self.result.status == "ok"

    def stop(self, opts: Options) -> None:
        if self.process is not None and not self.result.stop:
            self.result.stop = stop_server(self.process, opts.stop_timeout)

    def note_tracebacks(self) -> None:
        """Add to the detail how many tracebacks the server logged (errors it survived)."""
        if self.log_path.exists():
            log = self.log_path.read_text(errors="replace")
            if count := log.count("Traceback (most recent call last)"):
                self.result.detail += f" [its log has {count} traceback(s)]"

    def fail(self, exc: Exception, opts: Options) -> None:
        """Mark the server failed, with the tail of its log, and stop it."""
        self.result.status = "failed"
        lines = self.log_path.read_text(errors="replace").strip().splitlines()[-15:]
        self.result.detail = "\n".join([str(exc), *("    | " + line for line in lines)])
        self.stop(opts)


def start_server(spec: H2Spec, opts: Options, log_path: Path) -> Served:
    """Probe, start and check one server; a failure is recorded in its result."""
    served = Served(spec, Result(spec.label, spec.name), log_path)
    ok, served.result.detail = checkouts.probe(spec.probe, spec.checkout)
    if not ok:
        served.result.status = "skipped"
        return served
    served.port = port = free_port()
    print(f"[{spec.label}] {served.result.detail}: serving on 127.0.0.1:{port}", flush=True)
    served.process = launch(spec.command(port), spec.checkout, log_path, opts.server_cpu)
    try:
        wait_for_port(served.process, port, opts.start_timeout)
        if spec.protocol == "h2":
            check_endpoints_h2(port)
        else:
            check_endpoints(port)
    except (ServerFailed, OSError) as exc:
        served.fail(exc, opts)
    except BaseException:
        served.stop(opts)
        raise
    return served


def measure(served: Served, ep: Endpoint, round_index: int, opts: Options) -> None:
    """Warm up, then one measured h2load run on one endpoint, added to the server's rounds.

    The warm-up's rate (or the previous round's, on this endpoint) sizes the measured run
    to about ``--duration`` seconds; it may take up to four times that (then 30 s more)."""
    assert served.process is not None
    spec, port = served.spec, served.port
    timeout = 4 * opts.duration + 30
    try:
        warm = run_h2load(spec, port, ep, opts.warmup, opts, timeout) if opts.warmup else None
        earlier = served.result.endpoints.get(ep.name) or ([warm] if warm else [])
        rate = earlier[-1].rps if earlier and earlier[-1].requests else 1000.0
        count = max(opts.connections * opts.streams, round(rate * opts.duration))
        cpu_before = process_cpu_seconds(served.process.pid)
        load = run_h2load(spec, port, ep, count, opts, timeout)
        cpu_after = process_cpu_seconds(served.process.pid)
        if cpu_before is not None and cpu_after is not None:
            load.server_cpu_seconds = cpu_after - cpu_before
        served.result.endpoints.setdefault(ep.name, []).append(load)
        if served.process.poll() is not None:
            raise ServerFailed(f"died under load (exit code {served.process.returncode})")
    except (ServerFailed, subprocess.TimeoutExpired) as exc:
        served.fail(exc, opts)
        return
    which = f"round {round_index + 1}/{opts.rounds} " if opts.rounds > 1 else ""
    errors = f", {load.errors} errors" if load.errors else ""
    print(
        f"[{served.spec.label}] {which}{ep.method} {ep.path}: {load.rps:,.0f} req/s{errors}",
        flush=True,
    )
    time.sleep(0.5)  # let the closed connections drain


def bench_servers(specs: list[H2Spec], opts: Options, log_dir: Path) -> list[Result]:
    """Start every server, then measure them in rounds; stop them all in the end."""
    servers: list[Served] = []
    try:
        for index, spec in enumerate(specs):
            servers.append(start_server(spec, opts, log_dir / f"{index}-{spec.label}.log"))
        for round_index in range(opts.rounds):
            for ep in ENDPOINTS:
                for served in round_order(servers, round_index):
                    if served.serving:
                        measure(served, ep, round_index, opts)
    finally:
        for served in servers:
            served.stop(opts)
            served.note_tracebacks()
    return [served.result for served in servers]


# -- the report ----------------------------------------------------------------------------------
def server_us(loads: list[H2Load]) -> float | None:
    """The server's CPU microseconds per request over all rounds (``None`` without /proc)."""
    if not loads or any(load.server_cpu_seconds is None for load in loads):
        return None
    done = sum(load.requests for load in loads)
    return sum(load.server_cpu_seconds or 0.0 for load in loads) / done * 1e6 if done else None


def shape(opts: Options) -> str:
    pinning = (
        f"servers on CPU {opts.server_cpu}, h2load on CPU {opts.client_cpu}"
        if opts.server_cpu is not None
        else "no CPU pinning"
    )
    rounds = f", {opts.rounds} rounds in alternating order" if opts.rounds > 1 else ""
    return (
        f"h2load, 1 thread: HTTP/2 {opts.connections} connections x {opts.streams} streams; "
        f"HTTP/1.1 {opts.h1_connections} connections x 1 request in flight (no pipelining);\n"
        f"about {opts.duration} s per endpoint (a request count) after {opts.warmup:,} requests"
        f" of warm-up{rounds}; {pinning}"
    )


def print_report(results: list[Result], baseline: str, opts: Options) -> None:
    descriptions = {spec.name: spec.description for spec in SERVERS}
    print(f"\n{shape(opts)}")
    width = max([12, *(len(r.label) for r in results)])
    for r in results:
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.label:<{width}} {r.status:<8} {descriptions[r.name]}{stop}: {r.detail}")
    ran = [r for r in results if r.endpoints]
    if not ran:
        print("\nno server was benchmarked")
        return
    base = next((r for r in ran if r.label == baseline), None)
    several = opts.rounds > 1
    head = f"\n{'endpoint':<10} {'server':<{width}} {'req/s':>8}"
    head += f" {'min-max':>13}" if several else ""
    head += f" {'mean ms':>8} {'p99 ms':>7} {'µs/req':>7} {'x ' + baseline:>{len(baseline) + 2}}"
    print(head + "  errors")
    for ep in ENDPOINTS:
        for i, r in enumerate(ran):
            loads = r.endpoints.get(ep.name)
            if not loads:
                continue
            rps = statistics.median(load.rps for load in loads)
            row = f"{ep.name if i == 0 else '':<10} {r.label:<{width}} {rps:>8,.0f}"
            if several:
                low, high = min(load.rps for load in loads), max(load.rps for load in loads)
                row += f" {f'{low:,.0f}-{high:,.0f}':>13}"
            mean = statistics.median(load.mean_us for load in loads) / 1000
            p99 = statistics.median(load.p99_us for load in loads) / 1000
            cpu = server_us(loads)
            base_rps = base.median_rps(ep.name) if base else None
            ratio = f"{rps / base_rps:.2f}" if base_rps else "n/a"
            row += f" {mean:>8.2f} {p99:>7.2f} {f'{cpu:.0f}' if cpu else 'n/a':>7}"
            row += f" {ratio:>{len(baseline) + 2}}"
            print(f"{row}  {sum(load.errors for load in loads)}")
    for r in ran:
        if r.name == "trioframe-h2":
            print_targets(r, ran)


def target_pairs(results: list[Result]) -> list[tuple[Result, Result, float]]:
    """(trioframe-h2, other, target) for every trioframe-h2 result: against Hypercorn, and
    against the HTTP/1.1 server of the same checkout."""
    pairs = []
    for ours in results:
        if ours.name != "trioframe-h2":
            continue
        checkout = ours.label.removesuffix("-h2")
        for other in results:
            if other.name == "hypercorn-h2" or (
                other.name == "trioframe-h1" and other.label == f"{checkout}-h1"
            ):
                pairs.append((ours, other, TARGETS[other.name]))
    return pairs


def target_ratios(ours: Result, other: Result) -> dict[str, float]:
    ratios = {}
    for ep in ENDPOINTS:
        a, b = ours.median_rps(ep.name), other.median_rps(ep.name)
        if a is not None and b:
            ratios[ep.name] = a / b
    return ratios


def cpu_ratios(ours: Result, other: Result) -> dict[str, float]:
    """Per endpoint, the other server's CPU time per request over ours: the same comparison
    as ``target_ratios``, made with the figure the machine's noise moves least."""
    ratios = {}
    for ep in ENDPOINTS:
        a, b = (
            server_us(ours.endpoints.get(ep.name, [])),
            server_us(other.endpoints.get(ep.name, [])),
        )
        if a and b:
            ratios[ep.name] = b / a
    return ratios


def print_targets(ours: Result, ran: list[Result]) -> None:
    pairs = [pair for pair in target_pairs(ran) if pair[0] is ours]
    if not pairs:
        return
    print(f"\ntargets: {ours.label} against the other server, by median req/s (ours / theirs)")
    print("and by server CPU per request (theirs / ours):")
    for _, other, target in pairs:
        for how, ratios in (
            ("req/s", target_ratios(ours, other)),
            ("CPU  ", cpu_ratios(ours, other)),
        ):
            cells = [
                f"{name} {ratio:.2f} {'ok' if ratio >= target else 'MISS'}"
                for name, ratio in ratios.items()
            ]
            print(f"  {other.label:<14} >= {target:.2f} by {how}: " + ", ".join(cells))


# -- the command line ----------------------------------------------------------------------------
def parse_args() -> tuple[argparse.Namespace, list[H2Spec]]:
    """The options, and the servers to run in order (trioframe's once per checkout)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=5, help="seconds of load per endpoint")
    parser.add_argument(
        "--warmup",
        type=int,
        default=2000,
        help="requests of warm-up before each measurement (its rate sizes the first one)",
    )
    parser.add_argument("--connections", type=int, default=10, help="HTTP/2 connections")
    parser.add_argument("--streams", type=int, default=10, help="streams in flight a connection")
    parser.add_argument(
        "--h1-connections",
        type=int,
        help="HTTP/1.1 connections, one request in flight each (default: --connections)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="times every server is measured on every endpoint; the table gives the median",
    )
    parser.add_argument(
        "--only",
        default=",".join(SERVER_NAMES),
        help=f"comma-separated servers, from {','.join(SERVER_NAMES)} (default: all)",
    )
    checkouts.add_option(parser)
    parser.add_argument(
        "--baseline",
        help="the server the ratio column divides by (default: the first trioframe-h2)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument("--no-pin", action="store_true", help="do not pin servers and h2load")
    args = parser.parse_args()
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(SERVER_NAMES))
    if unknown:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {SERVER_NAMES}")
    if args.h1_connections is None:
        args.h1_connections = args.connections
    if min(args.duration, args.connections, args.streams, args.h1_connections, args.rounds) < 1:
        parser.error("--duration, --connections, --streams, --h1-connections, --rounds: >= 1")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    try:
        trioframes = checkouts.parse_checkouts(args.trioframe)
    except ValueError as exc:
        parser.error(str(exc))
    specs: list[H2Spec] = []
    for spec in SERVERS:
        if spec.name not in args.only:
            continue
        if spec.name.startswith("trioframe"):
            specs += [
                H2Spec(spec.name, spec.protocol, spec.description, spec.probe, spec.command, c)
                for c in trioframes
            ]
        else:
            specs.append(spec)
    labels = [spec.label for spec in specs]
    if len(set(labels)) != len(labels):
        parser.error(f"two servers have the same label: {labels}")
    if args.baseline is None:
        args.baseline = next((s.label for s in specs if s.name == "trioframe-h2"), labels[0])
    elif args.baseline not in labels:
        parser.error(f"--baseline {args.baseline} is not one of the servers run: {labels}")
    return args, specs


def main() -> int:
    args, specs = parse_args()
    if shutil.which("h2load") is None:
        print("h2load not found on PATH (apt-get install nghttp2-client)", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0))
    pin = not args.no_pin and len(cpus) >= 2
    opts = Options(
        duration=args.duration,
        warmup=args.warmup,
        connections=args.connections,
        streams=args.streams,
        h1_connections=args.h1_connections,
        server_cpu=cpus[0] if pin else None,
        client_cpu=cpus[1] if pin else None,
        rounds=args.rounds,
    )
    seconds = len(specs) * len(ENDPOINTS) * args.rounds * (args.duration + 1.5)
    print(f"{len(specs)} server(s), {args.rounds} round(s): about {seconds / 60:.0f} min of load")
    with tempfile.TemporaryDirectory(prefix="trioframe-bench-http2-") as log_dir:
        results = bench_servers(specs, opts, Path(log_dir))
    print_report(results, args.baseline, opts)
    if args.json:
        report = {
            "options": asdict(opts),
            "shape": shape(opts),
            "baseline": args.baseline,
            "endpoints": {ep.name: f"{ep.method} {ep.path}" for ep in ENDPOINTS},
            "servers": [
                {
                    **asdict(r),
                    "endpoints": {
                        name: {
                            "rps": round(statistics.median(load.rps for load in loads), 1),
                            "server_us_per_request": server_us(loads),
                            "rounds": [
                                {**asdict(load), "rps": round(load.rps, 1)} for load in loads
                            ],
                        }
                        for name, loads in r.endpoints.items()
                    },
                }
                for r in results
            ],
            "targets": [
                {
                    "ours": ours.label,
                    "other": other.label,
                    "target": target,
                    "ratios": {k: round(v, 3) for k, v in target_ratios(ours, other).items()},
                    "cpu_ratios": {k: round(v, 3) for k, v in cpu_ratios(ours, other).items()},
                }
                for ours, other, target in target_pairs(results)
            ],
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nresults written to {args.json}")
    return 0 if all(r.status != "failed" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
