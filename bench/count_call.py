"""Count the CPU instructions one Python expression costs, under valgrind's callgrind.

For the small steps of the hot path (a ``find``, a header check, building one object) the
server-level count of ``instructions.py`` is too coarse: a change of 1,000 instructions is
0.2 % of a request. Here each expression is evaluated ``--number`` times inside ``map()``
and callgrind collects only while ``map`` iterates (``--toggle-collect=map_next``), so start-up,
imports and the setup are not counted; the cost of evaluating ``None`` the same way is
subtracted. The figure is exact to the instruction and the same on every run.

Usage::

    python bench/count_call.py --setup "from trioframe._protocol.head import check_head, HeadLimits
    limits = HeadLimits(); head = b'GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'" "check_head(head, limits)"

Several expressions may follow; each is counted in its own process (``PYTHONHASHSEED=0``).
Needs valgrind (``apt-get install valgrind``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

_RUNNER = """
import gc, sys
exec(sys.argv[1], globals())
call = eval("lambda _: (" + sys.argv[2] + ")", globals())
for _ in range(200):  # warm-up: caches, specialised bytecode, interned values
    call(None)
gc.collect()
gc.disable()
list(map(call, range(int(sys.argv[3]))))
"""


def count(setup: str, expression: str, number: int) -> int:
    """Instructions collected while ``map`` evaluates ``expression`` ``number`` times."""
    completed = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=map_next",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            _RUNNER,
            setup,
            expression,
            str(number),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
    )
    match = re.search(r"Collected : (\d+)", completed.stderr)
    if match is None:
        raise SystemExit(f"no callgrind total for {expression!r}:\n{completed.stderr}")
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expressions", nargs="+", help="Python expressions to count")
    parser.add_argument("--setup", default="", help="statements run first (not counted)")
    parser.add_argument("--number", type=int, default=1000, help="evaluations (1000)")
    args = parser.parse_args()
    empty = count(args.setup, "None", args.number)
    for expression in args.expressions:
        total = count(args.setup, expression, args.number)
        print(f"{(total - empty) / args.number:10,.0f}  {expression}")


if __name__ == "__main__":
    main()
