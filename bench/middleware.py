"""Middleware overhead: ``GET /plaintext`` behind Logger + Cors + RequestId against the same
route with no middleware, in one process, one run. Target: at least 80 %.

    python bench/middleware.py [--duration 10] [--connections 50]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import (  # the sibling script is the library here
    APPS,
    PY,
    Endpoint,
    Options,
    free_port,
    pin_to,
    run_wrk,
    stop_server,
    subprocess_env,
    wait_for_port,
)

BARE = Endpoint("bare", "GET", "/bare/plaintext", "text/plain", b"Hello, World!")
WITH = Endpoint("mw", "GET", "/mw/plaintext", "text/plain", b"Hello, World!")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    args = parser.parse_args()
    opts = Options(args.duration, 2, args.connections, 10_000_000, 15.0, 10.0, 0, 1)
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [PY, str(APPS / "middleware_app.py"), str(port)],
            env=subprocess_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=pin_to(opts.server_cpu),
        )
        try:
            wait_for_port(proc, port, opts.start_timeout)
            run_wrk(port, BARE, opts.warmup, opts)
            rates = {}
            for endpoint in (BARE, WITH, BARE, WITH):  # interleaved: the machine drifts
                result = run_wrk(port, endpoint, opts.duration // 2 or 1, opts)
                rate = result.requests / (result.duration_us / 1e6)
                rates.setdefault(endpoint.name, []).append(rate)
        finally:
            stop_server(proc, opts.stop_timeout)
    bare = sum(rates["bare"]) / len(rates["bare"])
    with_mw = sum(rates["mw"]) / len(rates["mw"])
    print(f"GET /plaintext, no middleware             {bare:8,.0f} req/s")
    print(f"GET /plaintext, Logger + Cors + RequestId {with_mw:8,.0f} req/s")
    ratio = with_mw / bare
    print(f"ratio {ratio:.2f} (target >= 0.80: {'ok' if ratio >= 0.8 else 'MISS'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
