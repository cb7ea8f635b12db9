#!/usr/bin/env python3
"""Autobahn TestSuite conformance of the WebSocket server, driven by kosoku.

    python bench/autobahn/conformance.py [--server trioframe|trio-websocket] [--parallelism 2]
        [--section-timeout 600] [--compression-timeout 1200] [--deadline 2700]
        [--no-compression] [--sections 1,2,...] [--outdir DIR]

Starts the echo app (``echo_app.py``; ``--server trio-websocket`` for the reference peer) as a
process on 127.0.0.1 on a free port and runs kosoku, as the Autobahn fuzzing client, on the
required sections 1-7, 9 and 10, one kosoku run per section. Then, with a second server that
has ``websocket_compression=True``, sections 12 and 13 (permessage-deflate), reported
separately: their failures do not change the exit code. Prints a per-section summary and the
details of every case that did not pass; kosoku's HTML/JSON reports go to ``--outdir``
(default ``bench/autobahn/reports/``, ignored by git).

Exit code: 0 when every required case passed, 1 when one failed or a required section did
not finish in time, 2 when the run could not start (no kosoku, the server did not start).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from run import (  # bench/run.py is the library here  # noqa: E402
    PY,
    ROOT,
    ServerFailed,
    free_port,
    stop_server,
    subprocess_env,
    wait_for_port,
)

REQUIRED = ["1", "2", "3", "4", "5", "6", "7", "9", "10"]
COMPRESSION = ["12", "13"]
# kosoku's CaseResult.passed: both verdicts acceptable.
PASSING_BEHAVIOR = {"OK", "NON-STRICT", "INFORMATIONAL"}
PASSING_CLOSE = {"OK", "INFORMATIONAL"}
# The server's keep-alive ping, raised from 20 s: an unsolicited ping in the middle of a case
# makes Autobahn fail it, and the longest cases (12.x.15-18 with permessage-deflate: 1000
# messages of 128 KiB in 256-byte fragments) run longer than 20 s on a Python server.
PING_INTERVAL = 3600.0
OPCODES = {0: "cont", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: Callable[[int, bool], list[str]]  # (port, compression) -> argv
    compression: bool  # whether it can do permessage-deflate at all


SERVERS = {
    "trioframe": ServerSpec(
        "trioframe",
        lambda port, deflate: [
            *(PY, str(HERE / "echo_app.py"), str(port), "--ping-interval", str(PING_INTERVAL)),
            *(["--compression"] if deflate else []),
        ],
        True,
    ),
    "trio-websocket": ServerSpec(
        "trio-websocket",
        lambda port, deflate: [PY, str(HERE / "trio_websocket_echo.py"), str(port)],
        False,
    ),
}


@dataclass
class Case:
    case_id: str
    behavior: str
    close: str
    duration_ms: int
    report: Path

    @property
    def passed(self) -> bool:
        return self.behavior in PASSING_BEHAVIOR and self.close in PASSING_CLOSE

    @property
    def verdict(self) -> str:
        """The summary column this case counts in."""
        if self.behavior == "UNIMPLEMENTED":
            return "unimplemented"
        if not self.passed:
            return "failed"
        return {"OK": "ok", "NON-STRICT": "non-strict"}.get(self.behavior, "informational")


@dataclass
class Section:
    number: str
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    problem: str = ""  # why the section has no (or not all) results

    @property
    def counts(self) -> Counter[str]:
        return Counter(case.verdict for case in self.cases)

    @property
    def ok(self) -> bool:
        return not self.problem and all(case.passed for case in self.cases)


@dataclass
class Run:
    title: str
    sections: list[Section] = field(default_factory=list)
    agent: str = ""
    problem: str = ""  # why the run did not happen or stopped early


def kosoku_command() -> list[str] | None:
    """The kosoku console script of this interpreter's environment (or on PATH)."""
    beside = Path(sys.executable).parent / "kosoku"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("kosoku")
    return [found] if found else None


def run_bounded(command: list[str], timeout: float, log: Path) -> int | None:
    """Run ``command`` in its own session; kill the group after ``timeout`` s (then None)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def read_cases(outdir: Path) -> tuple[str, list[Case]]:
    """The agent (the server's name as kosoku saw it) and the cases from kosoku's index.json."""
    index = json.loads((outdir / "index.json").read_text())
    agents = list(index)
    cases = [
        Case(
            case_id,
            entry["behavior"],
            entry["behaviorClose"],
            int(entry.get("duration") or 0),
            outdir / entry["reportfile"],
        )
        for agent in agents
        for case_id, entry in index[agent].items()
    ]
    cases.sort(key=lambda case: [int(part) for part in case.case_id.split(".")])
    return ", ".join(agents), cases


@contextlib.contextmanager
def serving(
    spec: ServerSpec, compression: bool, log: Path, start_timeout: float
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """The server under test as its own process (own session) on 127.0.0.1; yields its port
    and process, and stops it on exit."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            spec.command(port, compression),
            cwd=ROOT,
            env=subprocess_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_port(proc, port, start_timeout)
        yield port, proc
    finally:
        stop_server(proc, 10.0)


def log_tail(log: Path, lines: int = 15) -> str:
    text = log.read_text(errors="replace").strip().splitlines()[-lines:] if log.exists() else []
    return "\n".join("    | " + line for line in text)


def run_sections(
    spec: ServerSpec,
    title: str,
    numbers: list[str],
    compression: bool,
    outdir: Path,
    args: argparse.Namespace,
    deadline: float,
) -> Run:
    section_timeout = args.compression_timeout if compression else args.section_timeout
    run = Run(title)
    kosoku = kosoku_command()
    if kosoku is None:
        run.problem = "kosoku not found (pip install kosoku)"
        return run
    if outdir.exists():
        shutil.rmtree(outdir)  # this run's own directory: no stale reports from an earlier run
    outdir.mkdir(parents=True)
    server_log = outdir / "server.log"
    try:
        with serving(spec, compression, server_log, args.start_timeout) as (port, proc):
            print(f"[{title}] {spec.name} serving on 127.0.0.1:{port}", flush=True)
            for number in numbers:
                section = Section(number)
                run.sections.append(section)
                left = deadline - time.monotonic()
                if left < 1:
                    section.problem = "not run: the overall --deadline was reached"
                    continue
                timeout = min(section_timeout, left)
                section_dir = outdir / number
                command = [
                    *kosoku,
                    *(f"ws://127.0.0.1:{port}/", "-i", f"{number}.*"),
                    *("-p", str(args.parallelism), "-o", str(section_dir)),
                ]
                started = time.monotonic()
                code = run_bounded(command, timeout, outdir / f"kosoku-{number}.log")
                section.seconds = time.monotonic() - started
                if code is None:
                    section.problem = f"kosoku did not finish within {timeout:.0f} s"
                elif not (section_dir / "index.json").exists():
                    section.problem = f"kosoku exited {code} without a report:\n" + log_tail(
                        outdir / f"kosoku-{number}.log"
                    )
                else:
                    run.agent, section.cases = read_cases(section_dir)
                    if not section.cases:
                        section.problem = "kosoku ran no case of this section"
                print(f"[{title}] section {number}: {summary_line(section)}", flush=True)
                if proc.poll() is not None:
                    raise ServerFailed(
                        f"the server exited during section {number}: {proc.returncode}"
                    )
    except ServerFailed as exc:
        run.problem = f"{exc}\n{log_tail(server_log)}"
    return run


def summary_line(section: Section) -> str:
    if section.problem and not section.cases:
        return section.problem.splitlines()[0]
    counts = section.counts
    text = ", ".join(f"{counts[k]} {k}" for k in COLUMNS if counts[k])
    return f"{len(section.cases)} cases ({text}) in {section.seconds:.1f} s" + (
        f"; {section.problem.splitlines()[0]}" if section.problem else ""
    )


COLUMNS = ["ok", "non-strict", "informational", "unimplemented", "failed"]


def print_table(run: Run) -> None:
    agent = f" (agent: {run.agent})" if run.agent else ""
    print(f"\n{run.title}{agent}")
    if run.problem:
        print(f"  not completed: {run.problem}")
    if not run.sections:
        return
    header = f"  {'section':<8}{'cases':>6}" + "".join(f"{c:>{len(c) + 2}}" for c in COLUMNS)
    print(header + f"{'seconds':>9}")
    total: Counter[str] = Counter()
    for section in run.sections:
        counts = section.counts
        total.update(counts)
        cells = "".join(f"{counts[c]:>{len(c) + 2}}" for c in COLUMNS)
        note = f"  {section.problem.splitlines()[0]}" if section.problem else ""
        print(f"  {section.number:<8}{len(section.cases):>6}{cells}{section.seconds:>9.1f}{note}")
    cases = sum(len(s.cases) for s in run.sections)
    seconds = sum(s.seconds for s in run.sections)
    print(
        f"  {'total':<8}{cases:>6}"
        + "".join(f"{total[c]:>{len(c) + 2}}" for c in COLUMNS)
        + f"{seconds:>9.1f}"
    )


def short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def frame_line(entry: list[Any]) -> str | None:
    """One wire-log entry as text: frames sent (TF) and received (RF), and connection ends."""
    kind = entry[0]
    if kind in ("TF", "RF"):
        (length, payload), opcode, fin = entry[1], entry[2], entry[3]
        arrow = "kosoku -> server" if kind == "TF" else "server -> kosoku"
        name = OPCODES.get(opcode, f"op{opcode}")
        flags = "fin" if fin else "no-fin"
        return f"{arrow}: {name} {flags} len={length} {short(payload, 60)!r}"
    if kind in ("CT", "CTE", "KL", "KLE", "TI", "TIE"):
        return f"{kind} {short(entry[1:], 80)}"
    return None


def print_failure(case: Case) -> None:
    print(f"\n  {case.case_id}: behavior {case.behavior}, close {case.close}")
    try:
        report = json.loads(case.report.read_text())
    except (OSError, ValueError) as exc:
        print(f"    (no case report: {exc})")
        return
    print(f"    case: {short(report.get('description', ''))}")
    print(f"    expected: {short(report.get('expectation', ''))}")
    print(f"    result: {report.get('result', '')}; close: {report.get('resultClose', '')}")
    print(f"    events expected: {short(report.get('expected'))}")
    print(f"    events received: {short(report.get('received'))}")
    print(
        f"    close: server sent code {report.get('remoteCloseCode')} "
        f"{report.get('remoteCloseReason') or ''!r}, kosoku sent {report.get('localCloseCode')}; "
        f"expected {short(report.get('expectedClose'))}; clean={report.get('wasClean')} "
        f"{report.get('wasNotCleanReason') or ''}"
    )
    frames = [line for e in report.get("wirelog") or [] if (line := frame_line(e))]
    if frames:
        print("    wire (last frames):")
        for line in frames[-10:]:
            print(f"      {line}")


def print_failures(run: Run) -> None:
    for section in run.sections:
        if section.problem:
            print(f"\n{run.title}: section {section.number}: {section.problem}")
    failed = [case for s in run.sections for case in s.cases if case.verdict == "failed"]
    if failed:
        print(f"\n{run.title}: {len(failed)} case(s) did not pass")
        for case in failed:
            print_failure(case)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", choices=sorted(SERVERS), default="trioframe")
    parser.add_argument("--parallelism", type=int, default=2, help="kosoku -p (cases at once)")
    parser.add_argument(
        "--section-timeout",
        type=float,
        default=600.0,
        help="seconds at most per required section",
    )
    parser.add_argument(
        "--compression-timeout",
        type=float,
        default=1200.0,
        help="seconds at most for each of sections 12 and 13",
    )
    parser.add_argument(
        "--deadline", type=float, default=2700.0, help="seconds at most for the whole script"
    )
    parser.add_argument("--start-timeout", type=float, default=20.0)
    parser.add_argument("--no-compression", action="store_true", help="skip sections 12 and 13")
    parser.add_argument(
        "--sections",
        help=f"comma-separated required sections to run (default: {','.join(REQUIRED)})",
    )
    parser.add_argument("--outdir", type=Path, default=HERE / "reports")
    args = parser.parse_args()
    args.sections = args.sections.split(",") if args.sections else REQUIRED
    if args.parallelism < 1:
        parser.error("--parallelism must be >= 1")
    return args


def main() -> int:
    args = parse_args()
    deadline = time.monotonic() + args.deadline
    spec = SERVERS[args.server]
    try:
        kosoku_version = version("kosoku")
    except PackageNotFoundError:
        kosoku_version = "?"
    print(
        f"Autobahn TestSuite with kosoku {kosoku_version} against the {spec.name} echo server; "
        f"{args.parallelism} case(s) at once; reports in {args.outdir}",
        flush=True,
    )
    required = run_sections(
        spec,
        "required sections (permessage-deflate off)",
        args.sections,
        False,
        args.outdir / f"{spec.name}-required",
        args,
        deadline,
    )
    runs = [required]
    if not args.no_compression:
        if spec.compression:
            runs.append(
                run_sections(
                    spec,
                    "permessage-deflate (websocket_compression=True), not required",
                    COMPRESSION,
                    True,
                    args.outdir / f"{spec.name}-compression",
                    args,
                    deadline,
                )
            )
        else:
            print(f"\n[{spec.name}] no permessage-deflate: sections 12 and 13 not run")
    for run in runs:
        print_table(run)
    for run in runs:
        print_failures(run)

    if required.problem and not required.sections:
        print("\nrequired sections: NOT RUN")
        return 2
    ok = not required.problem and all(s.ok for s in required.sections)
    print(f"\nrequired sections {', '.join(args.sections)}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
