"""Extractor overhead: trioframe's ``/extract/{id}`` (Path[int] + Query[Filters] + Json[Item])
against its plain ``/users/{id}``, in one process, one run. Target: within 25 %.

    python bench/extract.py [--duration 10] [--connections 50]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import (  # the sibling script is the library here
    APPS,
    Endpoint,
    one_app,
    requests_per_second,
    run_wrk,
    single_server_options,
)

ITEM = '{"name": "pen", "price": 1.5}'
PLAIN = Endpoint("users", "GET", "/users/42", "application/json", b"")
TYPED = Endpoint("extract", "POST", "/extract/42?page=2&active=yes", "application/json", b"")


def main() -> int:
    opts = single_server_options(__doc__.splitlines()[0])
    with one_app(APPS / "extract_app.py", opts) as port:
        run_wrk(port, PLAIN, opts.warmup, opts)
        plain = requests_per_second(run_wrk(port, PLAIN, opts.duration, opts))
        os.environ["BENCH_JSON_BODY"] = ITEM  # inherited by wrk through subprocess_env
        typed = requests_per_second(run_wrk(port, TYPED, opts.duration, opts))
    print(f"GET  /users/42 (Request)             {plain:8,.0f} req/s")
    print(f"POST /extract/42 (Path+Query+Json)   {typed:8,.0f} req/s")
    ratio = typed / plain
    print(f"ratio {ratio:.2f} (target >= 0.75: {'ok' if ratio >= 0.75 else 'MISS'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
