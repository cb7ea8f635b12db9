#!/usr/bin/env python3
"""Count the instructions trioframe's HTTP/2 sans-I/O layer alone spends per request.

    python bench/http2_replay.py [--requests 2000] [--trioframe LABEL=DIR ...]

No sockets, tasks or application: a Python h2 client's bytes for ``GET /plaintext`` and
``POST /echo`` (1 KiB), ten streams at a time, are recorded once, then replayed into an
``HTTP2Adapter`` that answers every request with a 13-byte body (``send_response``) and
acknowledges every body it reads (``consumed``). Each replay runs under callgrind twice, with
300 requests and with 300 + ``--requests`` (after a first run that writes the bytecode
caches); the difference divided by ``--requests`` is the figure, so imports and start-up
cancel out. Checkouts given with ``--trioframe`` are replayed
side by side (default: this one).
"""

from __future__ import annotations

import argparse
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENDPOINTS = ("plaintext", "echo")
BASE = 300  # requests in the shorter replay
HEAD = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", b"13"),
    (b"date", b"Sun, 29 Nov 2026 00:00:00 GMT"),
]


def serve(adapter: Any, chunk: bytes) -> bytes:
    """What the server answers to ``chunk``: every request gets its response once it ended."""
    from trioframe._protocol.http2_events import BodyEnded, BodyReceived, RequestStarted

    adapter.feed(chunk)
    while adapter.backlog:
        for event in adapter.receive():
            kind = type(event)
            body = getattr(event, "body", None)  # (the body came with its head)
            if kind is RequestStarted and body is not None:
                adapter.consumed(event.stream_id, body[1], read=True)
            if (kind is RequestStarted and event.ended) or kind is BodyEnded:
                adapter.send_response(event.stream_id, 200, HEAD, b"Hello, World!", earned=True)
            elif kind is BodyReceived:
                adapter.consumed(event.stream_id, event.flow_length, read=True)
    return adapter.data_to_send()


def new_adapter() -> Any:
    from trioframe._protocol.http2 import HTTP2Adapter, HTTP2Limits

    return HTTP2Adapter(HTTP2Limits(max_requests=10**9))


def record(endpoint: str, requests: int) -> list[bytes]:
    """The client's writes for ``requests`` requests, ten streams in flight."""
    import h2.config
    import h2.connection
    import h2.events

    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    adapter, writes, pending, done = new_adapter(), [], set(), 0
    head = [(b":scheme", b"http"), (b":authority", b"127.0.0.1")]
    while done < requests:
        for _ in range(10 - len(pending)):
            stream_id = client.get_next_available_stream_id()
            if endpoint == "plaintext":
                fields = [(b":method", b"GET"), *head, (b":path", b"/plaintext")]
                client.send_headers(stream_id, fields, end_stream=True)
            else:
                fields = [(b":method", b"POST"), *head, (b":path", b"/echo")]
                client.send_headers(stream_id, [*fields, (b"content-length", b"1024")])
                client.send_data(stream_id, b"x" * 1024, end_stream=True)
            pending.add(stream_id)
        writes.append(client.data_to_send())
        for event in client.receive_data(serve(adapter, writes[-1])):
            if isinstance(event, h2.events.DataReceived):
                client.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                pending.discard(event.stream_id)
                done += 1
    return writes


def replay(recording: Path, requests: int) -> None:
    adapter = new_adapter()
    for chunk in pickle.loads(recording.read_bytes())[: requests // 10]:
        serve(adapter, chunk)


def count(checkout: Path, recording: Path, requests: int) -> int:
    """Instructions of one replay under callgrind, start-up included."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            *("valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out"),
            *(sys.executable, __file__, "--replay", str(recording), "--requests", str(requests)),
        ]
        env = {"PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {done.stderr[-500:]}")
    return int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000, help="requests counted (2000)")
    parser.add_argument("--trioframe", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--replay", type=Path, help=argparse.SUPPRESS)  # (the measured child)
    args = parser.parse_args()
    if args.replay is not None:
        replay(args.replay, args.requests)
        return
    checkouts = [item.split("=", 1) for item in args.trioframe] or [["this", str(ROOT)]]
    print(f"k instructions per request, sans-I/O layer only, {args.requests} requests")
    with tempfile.TemporaryDirectory() as tmp:
        for endpoint in ENDPOINTS:
            recording = Path(tmp) / f"{endpoint}.pickle"
            sys.path.insert(0, str(ROOT))
            recording.write_bytes(pickle.dumps(record(endpoint, BASE + args.requests)))
            for label, directory in checkouts:
                count(Path(directory), recording, 10)  # (writes the bytecode caches first)
                short = count(Path(directory), recording, BASE)
                long = count(Path(directory), recording, BASE + args.requests)
                print(f"{endpoint:10} {label:12} {(long - short) / args.requests / 1000:8.1f}")


if __name__ == "__main__":
    main()
