#!/usr/bin/env python3
"""Count the CPU instructions trioframe spends per HTTP/2 request and per WebSocket message.

    python bench/instructions_streams.py [--requests 2000] [--rounds 3] [--only h2,h1,ws]
        [--trioframe main=/work/main --trioframe new=/work/wt/x] [--no-peers] [--json out.json]

The HTTP/2 and WebSocket companion of bench/instructions.py, with its method: each checkout's
server runs as one process under valgrind's callgrind on 127.0.0.1, and this script, not under
valgrind, is the client (bench/stream_clients.py). Three workloads:

    h2   apps/trioframe_app.py --http2: GET /plaintext and POST /echo (1 KiB) over h2c with
         prior knowledge, --connections connections sending --streams requests at a time
         (Python h2)
    h1   apps/trioframe_app.py --http1-parser llhttp, the same endpoints over HTTP/1.1, as
         bench/instructions.py counts them (--http1-connections keep-alive connections, one
         request in flight on each): the reference the HTTP/2 figures are divided by
    ws   autobahn/echo_app.py: a Router.websocket route echoing 16-byte text messages to
         --ws-connections connections, which take turns (websockets' sync client); beside
         it, as peers, Uvicorn with the websockets library on the asyncio loop serving the
         same echo (apps/uvicorn_ws_echo.py) from a Starlette route and from a bare ASGI app

Each round opens fresh connections, warms up on them, has the server collect its garbage, and
counts ``--requests`` requests (or messages) on the same connections; the figure is the median
over the rounds. With h2 and h1 both run, the report ends with each checkout's HTTP/2 figure
over its own HTTP/1.1 one, per endpoint. See bench/README.md for what is counted and how to
read the table.
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
from instructions import (
    VERSIONS,
    Callgrind,
    Count,
    KeepAliveClient,
    ServerSpec,
    kill_all_servers,
    trioframe_probe,
    versions,
)
from run import APPS, ENDPOINTS, Endpoint, ServerFailed, free_port, wait_for_port
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
#: The endpoints of the h2 and h1 workloads: the issue's targets, a GET and a POST with a body.
REQUEST_ENDPOINTS = [ep for ep in ENDPOINTS if ep.name in ("plaintext", "echo")]


@dataclass(frozen=True)
class Options:
    requests: int
    warmup: int
    rounds: int
    connections: int
    streams: int
    http1_connections: int
    header_table_size: int
    ws_connections: int
    timeout: float
    profiles: Path | None
    start_timeout: float = 180.0


class Client(Protocol):
    """Open connections: ``run(count)`` sends ``count`` requests or messages on them and
    checks every answer."""

    def run(self, count: int) -> object: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Workload:
    """What ``--only`` selects: a server command and the client that drives it, once per
    endpoint (``None``: the workload has one way of asking)."""

    name: str
    description: str
    probe: str
    command: Callable[[int], list[str]]
    client: Callable[[int, Options, Endpoint | None], Client]
    endpoints: tuple[Endpoint | None, ...] = (None,)
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


def _endpoint(endpoint: Endpoint | None) -> Endpoint:
    assert endpoint is not None, "a request workload is run per endpoint"
    return endpoint


WORKLOADS = [
    Workload(
        "h2",
        "HTTP/2 (h2c)",
        TRIOFRAME_H2_PROBE,
        lambda port: [
            *(*COLLECTING, str(APPS / "trioframe_app.py"), str(port), "--http2"),
            *("--max-requests-per-connection", str(UNLIMITED)),
            *("--keep-alive-timeout", QUIET_SECONDS),
        ],
        lambda port, opts, ep: H2Client(
            port,
            _endpoint(ep),
            opts.connections,
            opts.streams,
            opts.header_table_size,
            opts.timeout,
        ),
        tuple(REQUEST_ENDPOINTS),
    ),
    Workload(
        "h1",
        "HTTP/1.1 (llhttp)",
        trioframe_probe("llhttp"),
        lambda port: [
            *(*COLLECTING, str(APPS / "trioframe_app.py"), str(port), "--http1-parser", "llhttp"),
            *("--keep-alive-timeout", QUIET_SECONDS),
        ],
        lambda port, opts, ep: KeepAliveClient(
            port, _endpoint(ep), opts.http1_connections, opts.timeout
        ),
        tuple(REQUEST_ENDPOINTS),
    ),
    Workload(
        "ws",
        "WebSocket echo, 16 bytes",
        TRIOFRAME_WS_PROBE,
        lambda port: [*COLLECTING, str(ECHO_APP), str(port), "--ping-interval", QUIET_SECONDS],
        lambda port, opts, ep: EchoClient(port, opts.ws_connections, opts.timeout),
        peers=(uvicorn_ws_peer("starlette"), uvicorn_ws_peer("asgi")),
    ),
]
WORKLOAD_NAMES = [workload.name for workload in WORKLOADS]


@dataclass
class Result:
    checkout: str
    workload: str
    endpoint: str = ""  # the endpoint's name, "" for a workload with one way of asking
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


def count_round(
    workload: Workload, endpoint: Endpoint | None, port: int, server: Callgrind, opts: Options
) -> Count:
    """Open the workload's connections, warm up, collect the garbage, count the requests."""
    client = workload.client(port, opts, endpoint)
    try:
        client.run(opts.warmup)
        os.kill(server.process.pid, signal.SIGUSR1)  # done before the count: it waits for idle
        return server.count(lambda: client.run(opts.requests))
    finally:
        client.close()


def checkout_spec(workload: Workload, checkout: Checkout) -> ServerSpec:
    """trioframe from ``checkout`` serving the workload."""
    return ServerSpec(workload.name, checkout.label, workload.probe, workload.command, checkout)


def measure(workload: Workload, spec: ServerSpec, opts: Options) -> list[Result]:
    """Start the server for the workload under callgrind and count its rounds on each of the
    workload's endpoints; one result per endpoint."""
    results = [
        Result(spec.label, workload.name, ep.name if ep else "", requests=opts.requests)
        for ep in workload.endpoints
    ]
    ok, detail = probe(spec.probe, spec.checkout)
    for result in results:
        result.detail = detail
    if not ok:
        for result in results:
            result.status = "skipped"
        return results
    port = free_port()
    tag = f"[{spec.label} {workload.name}]"
    print(f"{tag} {detail}: under callgrind on 127.0.0.1:{port}", flush=True)
    with tempfile.TemporaryDirectory(prefix="trioframe-callgrind-") as workdir:
        server = Callgrind(spec, port, Path(workdir))
        result = results[0]
        try:
            wait_for_port(server.process, port, opts.start_timeout)
            if workload.name == "h2":
                check_endpoints_h2(port, opts.timeout)
            for endpoint, result in zip(workload.endpoints, results, strict=True):
                where = f"{tag}{' ' + result.endpoint if result.endpoint else ''}"
                for index in range(opts.rounds):
                    count = count_round(workload, endpoint, port, server, opts)
                    result.counts.append(count)
                    if opts.profiles:
                        name = ".".join(filter(None, (spec.label, workload.name, result.endpoint)))
                        shutil.copy(
                            server.last_dump, opts.profiles / f"{name}.{index + 1}.callgrind"
                        )
                    print(
                        f"{where} round {index + 1}: {result.each()[-1] / 1000:,.2f} k "
                        f"instructions each ({count.seconds:.0f} s)",
                        flush=True,
                    )
        except (ServerFailed, OSError) as exc:
            result.status = "failed"
            result.detail = f"{exc}\n{server.log_tail()}"
        finally:
            stop = server.stop()
            for each in results:
                each.stop = stop
    return results


# --- the report -------------------------------------------------------------------------------


def print_report(results: list[Result], opts: Options, elapsed: float) -> None:
    print(
        f"\ncallgrind: {opts.requests} requests or messages per count after {opts.warmup} of "
        f"warm-up, {opts.rounds} round(s); h2: {opts.connections} connections x "
        f"{opts.streams} streams, header table {opts.header_table_size} bytes; h1: "
        f"{opts.http1_connections} connections; ws: {opts.ws_connections} connections\n"
        f"{versions()}"
    )
    for r in results:
        if r.endpoint not in ("", REQUEST_ENDPOINTS[0].name):
            continue  # one line per server
        stop = f" [{r.stop}]" if r.stop else ""
        print(f"  {r.checkout:<14} {r.workload:<3} {r.status:<8} {r.detail}{stop}")
    ran = [r for r in results if r.counts]
    if not ran:
        print("\nno server was measured")
        return
    first = ran[0].checkout
    columns = [f"{'k instr each':>12}", f"{'spread':>7}", f"{'x ' + first:>14}"]
    print(f"\n{'workload':<38} {'checkout':<14} " + " ".join(columns))
    for workload in WORKLOADS:
        for endpoint in workload.endpoints:
            name = endpoint.name if endpoint else ""
            rows = [r for r in ran if r.workload == workload.name and r.endpoint == name]
            base = next((r.median for r in rows if r.checkout == first), None)
            for i, r in enumerate(rows):
                value, each = r.median or 0.0, r.each()
                cells = [f"{value / 1000:>12,.1f}", f"{(max(each) - min(each)) / value:>7.2%}"]
                cells.append(f"{value / base:>14.3f}" if base else f"{'n/a':>14}")
                asked = f" {endpoint.method} {endpoint.path}" if endpoint else ""
                label = f"{workload.name}: {workload.description}{asked}" if i == 0 else ""
                print(f"{label:<38} {r.checkout:<14} " + " ".join(cells))
    print_ratios(ran)
    print(f"\nrun time {elapsed / 60:.1f} min")


def print_ratios(ran: list[Result]) -> None:
    """Each checkout's HTTP/2 figure over its own HTTP/1.1 (llhttp) one, per endpoint."""
    medians = {(r.checkout, r.workload, r.endpoint): r.median for r in ran}
    lines = []
    for checkout in dict.fromkeys(r.checkout for r in ran if r.workload in ("h2", "h1")):
        cells = []
        for ep in REQUEST_ENDPOINTS:
            h2 = medians.get((checkout, "h2", ep.name))
            h1 = medians.get((checkout, "h1", ep.name))
            cells.append(f"{h2 / h1:>10.2f}" if h2 and h1 else f"{'n/a':>10}")
        lines.append(f"{checkout:<14} " + " ".join(cells))
    if any("n/a" not in line for line in lines):
        print(f"\nHTTP/2 over HTTP/1.1 (llhttp)\n{'checkout':<14} ", end="")
        print(" ".join(f"{ep.name:>10}" for ep in REQUEST_ENDPOINTS))
        print("\n".join(lines))


def write_json(path: Path, results: list[Result], opts: Options) -> None:
    report = {
        "versions": versions(),
        "options": {**asdict(opts), "profiles": str(opts.profiles) if opts.profiles else None},
        "results": [
            {
                "checkout": r.checkout,
                "workload": r.workload,
                "endpoint": r.endpoint,
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
    parser.add_argument(
        "--http1-connections",
        type=int,
        default=50,
        help="HTTP/1.1 keep-alive connections, as bench/instructions.py (50)",
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
    sizes += (args.http1_connections,)
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
        http1_connections=args.http1_connections,
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
            measured = pool.map(lambda job: measure(job[0], job[1], opts), jobs)
            results = [result for each in measured for result in each]
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
