#!/usr/bin/env python3
"""h2load against an HTTP/2 app: thousands of requests over many streams, every one 2xx.

    python bench/h2load_check.py [--requests 4000] [--connections 8] [--streams 100]

Serves examples/rest_api.py with ``ServerConfig(http2=True)`` (every other setting at its
default) as its own process on 127.0.0.1, then runs h2load over h2c (prior knowledge):

1. ``--requests`` POST /items with a JSON body (201 Created each);
2. ``--requests`` GETs spread over /items/1, /items?page_size=5 and /items?page=2&min_price=1.

Each connection carries ``--streams`` concurrent streams (100, the server's
``max_concurrent_streams``). The requests per connection stay under the server's
``max_requests_per_connection`` (1000): h2load does not open a new connection after the
server's GOAWAY, so more would fail by design. Exit code 0 only when every request of both
runs completed with a 2xx status, the server logged no error, and it then stopped gracefully
on SIGTERM (exit 0); 1 otherwise, 2 when h2load is missing. Used by ``nox -s h2load``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import PY, ROOT, environment
from run import APPS, ServerFailed, free_port, stop_server, wait_for_port

EXAMPLE = ROOT / "examples" / "rest_api.py"
MAX_REQUESTS_PER_CONNECTION = 1000  # ServerConfig's default
_REQUESTS = re.compile(
    r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
    r"(\d+) errored, (\d+) timeout",
    re.MULTILINE,
)
_STATUSES = re.compile(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", re.MULTILINE)
_FINISHED = re.compile(r"^finished in .*$", re.MULTILINE)


def h2load(args: argparse.Namespace, urls: list[str], *options: str) -> tuple[bool, str]:
    """Run h2load; (True, its summary line) when every request completed with a 2xx."""
    command = [
        *("h2load", "-t1", f"-n{args.requests}", f"-c{args.connections}"),
        *(f"-m{args.streams}", *options, *urls),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    out = proc.stdout
    requests, statuses, finished = (
        _REQUESTS.search(out),
        _STATUSES.search(out),
        _FINISHED.search(out),
    )
    if proc.returncode != 0 or not (requests and statuses and finished):
        return False, f"h2load exited {proc.returncode}: {(out + proc.stderr)[-800:]}"
    total, _started, done, succeeded, failed, errored, timeouts = map(int, requests.groups())
    ok_2xx, *others = map(int, statuses.groups())
    summary = f"{finished.group(0)}; {requests.group(0)}; {statuses.group(0)}"
    everything = total == args.requests == done == succeeded == ok_2xx
    return everything and failed == errored == timeouts == sum(others) == 0, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=4000, help="requests per h2load run")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--streams", type=int, default=100, help="concurrent streams a connection")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per h2load run")
    args = parser.parse_args()
    per_connection = -(-args.requests // args.connections)
    if per_connection > MAX_REQUESTS_PER_CONNECTION:
        parser.error(
            f"{per_connection} requests per connection: at most {MAX_REQUESTS_PER_CONNECTION}"
            " (the server's max_requests_per_connection; h2load does not reconnect)"
        )
    if shutil.which("h2load") is None:
        print("h2load not found on PATH (apt-get install nghttp2-client)", file=sys.stderr)
        return 2
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    ok = True
    with tempfile.TemporaryDirectory(prefix="trioframe-h2load-") as tmp:
        body, log_path = Path(tmp) / "item.json", Path(tmp) / "server.log"
        body.write_text(json.dumps({"name": "Widget", "price": 9.5, "description": "h2load"}))
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                [PY, str(APPS / "example_h2.py"), str(EXAMPLE), str(port)],
                cwd=ROOT,
                env=environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            wait_for_port(server, port, 20.0)
            runs = [
                (
                    "POST /items",
                    [f"{base}/items"],
                    ("-d", str(body), "-H", "content-type: application/json"),
                ),
                (
                    "GET /items/1, /items?page_size=5, /items?page=2&min_price=1",
                    [
                        f"{base}/items/1",
                        f"{base}/items?page_size=5",
                        f"{base}/items?page=2&min_price=1",
                    ],
                    (),
                ),
            ]
            for name, urls, options in runs:
                passed, summary = h2load(args, urls, *options)
                ok &= passed
                print(f"{'ok  ' if passed else 'FAIL'} {name}: {summary}", flush=True)
                if server.poll() is not None:
                    raise ServerFailed(f"the server exited with code {server.returncode}")
        except (ServerFailed, subprocess.TimeoutExpired) as exc:
            print(f"FAIL {exc}")
            ok = False
        finally:
            ended = stop_server(server, 15.0)
        logged = log_path.read_text(errors="replace").strip()
    print(f"{'ok  ' if ended == 'exit 0' else 'FAIL'} server stopped on SIGTERM: {ended}")
    if logged:
        print(
            "FAIL the server logged:\n"
            + "\n".join("    | " + line for line in logged.splitlines()[-30:])
        )
    ok = ok and ended == "exit 0" and not logged
    print("all requests 2xx" if ok else "h2load check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
