"""Instructions per parse of a typed JSON body (the parser ``Json[T]`` runs before the
converters), under callgrind, for one or more checkouts side by side:

    python bench/json_parse.py --trioframe before=../old-checkout --trioframe after=.

Each checkout parses the same small record (strings, a number, a list, a nested object) N and
2N times; the difference divided by N is the cost of one parse, start-up excluded. Needs
valgrind.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkouts import (
    TRIOFRAME_PROBE,
    Checkout,
    add_option,
    environment,
    parse_checkouts,
    probe,
)

RECORD = (
    b'{"name": "widget", "price": "12.50", "id": "7b1e4c1e-1d7a-4b1a-9d5e-1a2b3c4d5e6f", '
    b'"tags": ["a", "b"], "when": "2026-11-28T10:00:00Z", "n": 3, '
    b'"nested": {"x": 1, "y": null}}'
)
VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
LOOP = (
    "import sys\ntry:\n    from trioframe._extract.json_text import parse_json\n"
    "except ImportError:  # a checkout from before the module\n"
    "    from trioframe._extract.sources import _parse_json as parse_json\n"
    f"body = {RECORD!r}\n"
    "for _ in range(int(sys.argv[1])):\n    parse_json(body)\n"
)


def instructions(checkout: Checkout, count: int) -> int:
    """Instructions callgrind counts for ``count`` parses, start-up included (in the
    checkout's directory: ``python -c`` puts the working directory first on the path)."""
    done = subprocess.run(
        [*VALGRIND, sys.executable, "-c", LOOP, str(count)],
        cwd=checkout.directory,
        env=environment(checkout, PYTHONHASHSEED="0"),
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found, done.stderr
    return int(found[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_option(parser)
    parser.add_argument("--parses", type=int, default=2000)
    args = parser.parse_args()
    results = []
    for checkout in parse_checkouts(args.trioframe):
        ok, where = probe(TRIOFRAME_PROBE, checkout)
        if not ok:
            print(f"{checkout.label}: {where}")
            return 1
        once = instructions(checkout, args.parses)
        twice = instructions(checkout, 2 * args.parses)
        results.append((checkout.label, (twice - once) / args.parses))
    first = results[0][1]
    for label, per_parse in results:
        print(
            f"{label:<12} {per_parse / 1000:7.1f} k instructions per parse  x{per_parse / first:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
