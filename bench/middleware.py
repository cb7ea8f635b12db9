"""Middleware overhead: ``GET /plaintext`` behind Logger + Cors + RequestId against the same
route with no middleware, in one process, one run. Target: at least 80 %.

    python bench/middleware.py [--duration 10] [--connections 50]
"""

from __future__ import annotations

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

BARE = Endpoint("bare", "GET", "/bare/plaintext", "text/plain", b"Hello, World!")
WITH = Endpoint("mw", "GET", "/mw/plaintext", "text/plain", b"Hello, World!")


def main() -> int:
    opts = single_server_options(__doc__.splitlines()[0])
    rates: dict[str, list[float]] = {}
    with one_app(APPS / "middleware_app.py", opts) as port:
        run_wrk(port, BARE, opts.warmup, opts)
        for endpoint in (BARE, WITH, BARE, WITH):  # interleaved: the machine drifts
            result = run_wrk(port, endpoint, opts.duration // 2 or 1, opts)
            rates.setdefault(endpoint.name, []).append(requests_per_second(result))
    bare = sum(rates["bare"]) / len(rates["bare"])
    with_mw = sum(rates["mw"]) / len(rates["mw"])
    print(f"GET /plaintext, no middleware             {bare:8,.0f} req/s")
    print(f"GET /plaintext, Logger + Cors + RequestId {with_mw:8,.0f} req/s")
    ratio = with_mw / bare
    print(f"ratio {ratio:.2f} (target >= 0.80: {'ok' if ratio >= 0.8 else 'MISS'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
