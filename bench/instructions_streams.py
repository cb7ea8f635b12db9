#!/usr/bin/env python3
"""Count the CPU instructions trioframe spends per HTTP/2 request and per WebSocket message.

    python bench/instructions_streams.py [--requests 2000] [--rounds 3] [--only h2,ws]
        [--trioframe main=/work/main --trioframe new=/work/wt/x] [--no-peers] [--json out.json]

The HTTP/2 and WebSocket companion of bench/instructions.py, with its method: each checkout's
server runs as one process under valgrind's callgrind on 127.0.0.1, and this script, not under
valgrind, is the client (bench/stream_clients.py). Two workloads:

    h2   apps/trioframe_app.py --http2: GET /plaintext over h2c with prior knowledge,
         --connections connections sending --streams requests at a time (Python h2)
    ws   autobahn/echo_app.py: a Router.websocket route echoing 16-byte text messages to
         --ws-connections connections, which take turns (websockets' sync client); beside
         it, as peers, Uvicorn with the websockets library on the asyncio loop serving the
         same echo (apps/uvicorn_ws_echo.py) from a Starlette route and from a bare ASGI app

Each round opens fresh connections, warms up on them, has the server collect its garbage, and
counts ``--requests`` requests (or messages) on the same connections; the figure is the median
over the rounds. See bench/README.md for what is counted and how to read the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import PY, TRIOFRAME_PROBE, Checkout, add_option, parse_checkouts, probe
from http2 import TRIOFRAME_H2_PROBE, UNLIMITED, check_endpoints_h2
from instructions import VERSIONS, Callgrind, Count, ServerSpec, kill_all_servers, versions
from run import APPS, ServerFailed, free_port, wait_for_port
from stream_clients import EchoClient, H2Client

#: Runs an app with a full garbage collection on SIGUSR1, sent before each count.
COLLECTING = (PY, str(APPS / "collect_on_signal.py"))
ECHO_APP = Path(__file__).resolve().parent / "autobahn" / "echo_app.py"
UVICORN_WS_APP = APPS / "uvicorn_ws_echo.py"
#: Idle connections' timeout and the WebSocket keep-alive pings: nothing on a timer while counting.
QUIET_SECONDS = "3600"
TRIOFRAME_WS_PROBE = (
    "import wsproto\nfrom trioframe import Router, ServerConfig\nRouter().websocket\n"
    "ServerConfig().with_websocket_ping_interval\n" + TRIOFRAME_PROBE
)


@dataclass(frozen=True)
class Options:
    requests: int
    warmup: int
    rounds: int
    connections: int
    streams: int
    header_table_size: int
    ws_connections: int
    timeout: float
    profiles: Path | None
    start_timeout: float = 180.0


class Client(Protocol):
    """Open connections: ``run(count)`` sends ``count`` requests or messages on them and
    checks every answer."""

    def run(self, count: int) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Workload:
    """What ``--only`` selects: trioframe's server command, the client that drives it, and
    other servers measured with the same client (left out with ``--no-peers``)."""

    name: str
    description: str
    probe: str
    command: Callable[[int], list[str]]
    client: Callable[[int, Options], Client]
    peers: tuple[ServerSpec, ...] = ()


def uvicorn_ws_peer(app: str) -> ServerSpec:
    """apps/uvicorn_ws_echo.py with ``--app app``: Uvicorn + websockets, asyncio loop."""
    framework = "Starlette" if app == "starlette" else "bare ASGI"
    return ServerSpec(
        "ws",
        "uvicorn-ws" if app == "starlette" else "uvicorn-ws-asgi",
        VERSIONS + "import importlib.util, starlette, uvicorn, websockets\n"
        "c = importlib.util.find_spec('websockets.speedups') is not None\n"
        f"print('{framework} on Uvicorn', v('uvicorn'), '--ws websockets', v('websockets'),"
        " '(C speedups)' if c else '(pure Python)', 'Starlette', v('starlette'), 'loop=asyncio')",
        lambda port: [*COLLECTING, str(UVICORN_WS_APP), str(port), "--app", app],
    )


WORKLOADS = [
    Workload(
        "h2",
        "HTTP/2 GET /plaintext",
        TRIOFRAME_H2_PROBE,
        lambda port: [
            *(*COLLECTING, str(APPS / "trioframe_app.py"), str(port), "--http2"),
            *("--max-requests-per-connection", str(UNLIMITED)),
            *("--keep-alive-timeout", QUIET_SECONDS),
        ],
        lambda port, opts: H2Client(
            port, opts.connections, opts.streams, opts.header_table_size, opts.timeout
        ),
    ),
    Workload(
        "ws",
        "WebSocket echo, 16 bytes",
        TRIOFRAME_WS_PROBE,
        lambda port: [*COLLECTING, str(ECHO_APP), str(port), "--ping-interval", QUIET_SECONDS],
        lambda port, opts: EchoClient(port, opts.ws_connections, opts.timeout),
        (uvicorn_ws_peer("starlette"), uvicorn_ws_peer("asgi")),
    ),
]
WORKLOAD_NAMES = [workload.name for workload in WORKLOADS]


@dataclass
class Result:
    checkout: str
    workload: str
    status: str = "ok"  # ok | skipped | failed
    detail: str = ""
    stop: str = ""
    counts: list[Count] = field(default_factory=list)  # one per round
    requests: int = 0  # in each count

    def each(self) -> list[float]:
        """Instructions per request or message, one figure per round."""
        return [count.instructions / self.requests for count in self.counts]

    @property
    def median(self) -> float | None:
        return statistics.median(self.each()) if self.counts else None


def count_round(workload: Workload, port: int, server: Callgrind, opts: Options) -> Count:
    """Open the workload's connections, warm up, collect the garbage, count the requests."""
    client = workload.client(port, opts)
    try:
        client.run(opts.warmup)
        os.kill(server.process.pid, signal.SIGUSR1)  # done before the count: it waits for idle
        return server.count(lambda: client.run(opts.requests))
    finally:
        client.close()


def checkout_spec(workload: Workload, checkout: Checkout) -> ServerSpec:
    """trioframe from ``checkout`` serving the workload."""
    return ServerSpec(workload.name, checkout.label, workload.probe, workload.command, checkout)


def measure(workload: Workload, spec: ServerSpec, opts: Options) -> Result:
    """Start the server for the workload under callgrind and count its rounds."""
    result = Result(spec.label, workload.name, requests=opts.requests)
    ok, result.detail = probe(spec.probe, spec.checkout)
    if not ok:
        result.status = "skipped"
        return result
    port = free_port()
    tag = f"[{spec.label} {workload.name}]"
    print(f"{tag} {result.detail}: under callgrind on 127.0.0.1:{port}", flush=True)
    with tempfile.TemporaryDirectory(prefix="trioframe-callgrind-") as workdir:
        server = Callgrind(spec, port, Path(workdir))
        try:
            wait_for_port(server.process, port, opts.start_timeout)
            if workload.name == "h2":
                check_endpoints_h2(port, opts.timeout)
            for index in range(opts.rounds):
                result.counts.append(count := count_round(workload, port, server, opts))
                if opts.profiles:
                    name = f"{spec.label}.{workload.name}.{index + 1}.callgrind"
                    shutil.copy(server.last_dump, opts.profiles / name)
                print(
                    f"{tag} round {index + 1}: {result.each()[-1] / 1000:,.2f} k instructions "
                    f"each ({count.seconds:.0f} s)",
                    flush=True,
                )
        except (ServerFailed, OSError) as exc:
            result.status = "failed"
            result.detail = f"{exc}\n{server.log_tail()}"
        finally:
            result.stop = server.stop()
    return result


# --- the report -------------------------------------------------------------------------------


def print_report(results: list[Result], opts: Options, elapsed: float) -> None:
    print(
        f"\ncallgrind: {opts.requests} requests or messages per count after {opts.warmup} of "
        f"warm-up, {opts.rounds} round(s); h2: {opts.connections} connections x "
        f"{opts.streams} streams, header table {opts.header_table_size} bytes; ws: "
        f"{opts.ws_connections} connections\n{versions()}"
    )
    for r in results:
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.checkout:<14} {r.workload:<3} {r.status:<8} {r.detail}{stop}")
    ran = [r for r in results if r.counts]
    if not ran:
        print("\nno server was measured")
        return
    first = ran[0].checkout
    columns = [f"{'k instr each':>12}", f"{'spread':>7}", f"{'x ' + first:>14}"]
    print(f"\n{'workload':<28} {'checkout':<14} " + " ".join(columns))
    for workload in WORKLOADS:
        rows = [r for r in ran if r.workload == workload.name]
        base = next((r.median for r in rows if r.checkout == first), None)
        for i, r in enumerate(rows):
            value, each = r.median or 0.0, r.each()
            cells = [f"{value / 1000:>12,.1f}", f"{(max(each) - min(each)) / value:>7.2%}"]
            cells.append(f"{value / base:>14.3f}" if base else f"{'n/a':>14}")
            label = f"{workload.name}: {workload.description}" if i == 0 else ""
            print(f"{label:<28} {r.checkout:<14} " + " ".join(cells))
    print(f"\nrun time {elapsed / 60:.1f} min")


def write_json(path: Path, results: list[Result], opts: Options) -> None:
    report = {
        "versions": versions(),
        "options": {**asdict(opts), "profiles": str(opts.profiles) if opts.profiles else None},
        "results": [
            {
                "checkout": r.checkout,
                "workload": r.workload,
                "status": r.status,
                "detail": r.detail,
                "stop": r.stop,
                "instructions_each": r.median,
                "rounds": [
                    {"instructions": c.instructions, "seconds": round(c.seconds, 2)}
                    for c in r.counts
                ],
            }
            for r in results
        ],
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {path}")


# --- the command line -------------------------------------------------------------------------


def parse_args() -> tuple[argparse.Namespace, list[Checkout], list[Workload], Options]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--requests", type=int, default=2000, help="requests or messages counted (2000)"
    )
    parser.add_argument(
        "--warmup", type=int, default=300, help="requests or messages before each count (300)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="counts per server (3)")
    parser.add_argument(
        "--only",
        default=",".join(WORKLOAD_NAMES),
        help=f"comma-separated workloads from {','.join(WORKLOAD_NAMES)} (all)",
    )
    parser.add_argument("--connections", type=int, default=10, help="HTTP/2 connections (10)")
    parser.add_argument(
        "--streams", type=int, default=10, help="HTTP/2 requests per connection at a time (10)"
    )
    parser.add_argument(
        "--header-table-size",
        type=int,
        default=256,
        help="the HTTP/2 client's SETTINGS_HEADER_TABLE_SIZE, in bytes (256)",
    )
    parser.add_argument("--ws-connections", type=int, default=4, help="WebSocket connections (4)")
    add_option(parser)
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, len(os.sched_getaffinity(0))),
        help="servers measured at the same time (one per core: 2 here); counts do not change",
    )
    parser.add_argument(
        "--no-peers", action="store_true", help="measure trioframe's checkouts only"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument(
        "--profiles", type=Path, help="keep every count's callgrind dump in this directory"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for any answer (120)"
    )
    args = parser.parse_args()
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    if unknown := sorted(set(only) - set(WORKLOAD_NAMES)):
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {WORKLOAD_NAMES}")
    sizes = (args.requests, args.rounds, args.connections, args.streams, args.ws_connections)
    if min(sizes) < 1 or args.warmup < 0 or args.header_table_size < 0:
        parser.error("--requests, --rounds, connections and streams must be >= 1, others >= 0")
    try:
        checkouts = parse_checkouts(args.trioframe)
    except ValueError as exc:
        parser.error(str(exc))
    opts = Options(
        requests=args.requests,
        warmup=args.warmup,
        rounds=args.rounds,
        connections=args.connections,
        streams=args.streams,
        header_table_size=args.header_table_size,
        ws_connections=args.ws_connections,
        timeout=args.timeout,
        profiles=args.profiles,
    )
    return args, checkouts, [w for w in WORKLOADS if w.name in only], opts


def main() -> int:
    args, checkouts, workloads, opts = parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            print(f"{tool} not found on PATH (apt-get install valgrind)", file=sys.stderr)
            return 2
    if opts.profiles:
        opts.profiles.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the servers, as on ctrl-c
    jobs = [
        (workload, spec)
        for workload in workloads
        for spec in [
            *(checkout_spec(workload, checkout) for checkout in checkouts),
            *(() if args.no_peers else workload.peers),
        ]
    ]
    started = time.monotonic()
    with ThreadPoolExecutor(min(args.jobs, len(jobs)) or 1) as pool:
        try:
            results = list(pool.map(lambda job: measure(job[0], job[1], opts), jobs))
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
