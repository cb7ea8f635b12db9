"""Extractor overhead: trioframe's ``/extract/{id}`` (Path[int] + Query[Filters] + Json[Item])
against its plain ``/users/{id}``, in one process, one run. Target: within 25 %.

    python bench/extract.py [--duration 10] [--connections 50]
"""

from __future__ import annotations

import argparse
import os
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

ITEM = '{"name": "pen", "price": 1.5}'
PLAIN = Endpoint("users", "GET", "/users/42", "application/json", b"")
TYPED = Endpoint("extract", "POST", "/extract/42?page=2&active=yes", "application/json", b"")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    args = parser.parse_args()
    opts = Options(args.duration, 2, args.connections, 10_000_000, 15.0, 10.0, 0, 1)
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [PY, str(APPS / "extract_app.py"), str(port)],
            env=subprocess_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=pin_to(opts.server_cpu),
        )
        try:
            wait_for_port(proc, port, opts.start_timeout)
            run_wrk(port, PLAIN, opts.warmup, opts)
            plain = run_wrk(port, PLAIN, opts.duration, opts)
            os.environ["BENCH_JSON_BODY"] = ITEM  # inherited by wrk through subprocess_env
            typed = run_wrk(port, TYPED, opts.duration, opts)
        finally:
            stop_server(proc, opts.stop_timeout)
    plain_rps = plain.requests / (plain.duration_us / 1e6)
    typed_rps = typed.requests / (typed.duration_us / 1e6)
    print(f"GET  /users/42 (Request)             {plain_rps:8,.0f} req/s")
    print(f"POST /extract/42 (Path+Query+Json)   {typed_rps:8,.0f} req/s")
    ratio = typed_rps / plain_rps
    verdict = "ok" if ratio >= 0.75 else "MISS"
    print(f"ratio {ratio:.2f} (target >= 0.75: {verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
