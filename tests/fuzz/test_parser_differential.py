"""The two HTTP/1.1 paths, h11's and llhttp's (the ``speedups`` extra), held to the same
behaviour: every input is served once by each, on one in-memory connection with the fuzz
harness's small limits (``http1_harness``), and the two runs must agree on

- the handler calls: method, target, the body read, the error reading it raised, the status
  answered;
- the responses: each one's interim statuses, status, body, whether it says
  ``Connection: close`` and whether it was cut short. Not compared: an error's message
  (which check fires first on a head that breaks several rules depends on how its bytes
  were cut into reads), how much of a body got out before the client left, and the header
  order and spelling (both are valid HTTP/1.1, checked strictly by
  ``responses.parse_responses``; the fuzz oracle checks every error body's form);
- the connection's outcome: which responses say ``Connection: close`` (above), how many
  requests the connection served before it ended (the calls), and the errors logged (none,
  in both). How many of the client's bytes got in before the server closed is not compared:
  it depends on the scheduling of the client's writes, not on the parser.

Each input reaches the server in one read (then, for some, the end of the stream), and a
client that leaves does not cancel its handler (``cancel_on_disconnect=False``): how bytes
are cut into reads decides which check fires first on a head that breaks several rules (a
414 or a 400), and when the server notices a client's leaving decides how much of a
response gets out; neither is the parser's doing. Both are exercised on each parser by the
fuzz target itself (``test_http1_fuzz.py``), which the test session runs once per parser.

The inputs: the whole hostile seed corpus (``corpus/http1``), the fuzz target's reproducers,
heads each parser judges differently on its own (cases below, Content-Lengths of thousands of
digits among them, with a larger head limit), and the fuzz target's own generator
(structured requests, mutated). Each run is also judged by the fuzz oracle
(``http1_harness.check``), so agreeing on a wrong answer fails too.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given

from tests.fuzz._settings import fuzz_settings
from tests.fuzz.http1_harness import (
    CONFIG,
    LIMITS,
    Behaviour,
    ConnectionInput,
    Run,
    check,
    serve,
)
from tests.fuzz.http1_inputs import CORPUS, connection_inputs
from tests.fuzz.responses import ServerResponse, parse_responses
from tests.fuzz.test_http1_fuzz import REPRODUCERS

pytest.importorskip("httptools", reason="the speedups extra (httptools) is not installed")

# A client that leaves does not cancel the handler here: when the server notices the end of
# the stream (during a handler or after it) is scheduling, not parsing.
H11 = attrs.evolve(CONFIG, http1_parser="h11", cancel_on_disconnect=False)
LLHTTP = attrs.evolve(CONFIG, http1_parser="llhttp", cancel_on_disconnect=False)

_ALL_BEHAVIOURS = tuple(Behaviour)


def outcome(run: Run) -> dict[str, Any]:
    """What must be the same on both paths."""
    responses, interim = parse_responses(run.output, [call.method for call in run.calls])
    return {
        "calls": [attrs.asdict(call) for call in run.calls],
        "responses": [
            (r.interim, r.status, _comparable_body(r), r.closes, r.truncated) for r in responses
        ],
        "interim at the end": interim,
        "logged": run.logged,
    }


def _comparable_body(response: ServerResponse) -> bytes:
    """The body, but for what scheduling decides: an error's message (which check fires
    first on a head that breaks several rules depends on how its bytes were cut into reads)
    and how much of a body got out before the client left."""
    if response.status >= 400 or response.truncated:
        return b""
    return response.body


def assert_same(case: ConnectionInput) -> None:
    case = attrs.evolve(case, writes=())  # one write, so one read: see the module docstring
    by_h11, by_llhttp = serve(case, H11), serve(case, LLHTTP)
    check(by_h11)
    check(by_llhttp)
    assert outcome(by_llhttp) == outcome(by_h11)


def _with_each_behaviour(data: bytes) -> list[ConnectionInput]:
    return [
        ConnectionInput(data, behaviours=(behaviour,), close_write=close)
        for behaviour in _ALL_BEHAVIOURS
        for close in (False, True)
    ]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_seed_corpus(name: str) -> None:
    for case in _with_each_behaviour(CORPUS[name]):
        assert_same(case)


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_the_fuzz_reproducers(name: str) -> None:
    assert_same(REPRODUCERS[name])


_GET = b"GET / HTTP/1.1\r\nHost: t\r\n"


def _body_of_3_then_get(digits: int) -> bytes:
    """A GET with the body ``abc``, its Content-Length written with ``digits`` digits
    (leading zeros), then another GET."""
    length = b"3".zfill(digits)
    return _GET + b"Content-Length: " + length + b"\r\n\r\nabc" + _GET + b"\r\n"


#: Heads where llhttp's own verdict differs from h11's: each must still be h11's.
PARSER_DISAGREEMENTS = {
    "a method llhttp does not know": b"BREW / HTTP/1.1\r\nHost: t\r\n\r\n",
    "HTTP/1.2": b"GET / HTTP/1.2\r\nHost: t\r\n\r\n",
    "HTTP/1.2 pipelined": b"GET / HTTP/1.2\r\nHost: t\r\n\r\n" + _GET + b"\r\n",
    "obs-text in the target": b"GET /\x80 HTTP/1.1\r\nHost: t\r\n\r\n",
    "a tab in the target": b"GET /a\tb HTTP/1.1\r\nHost: t\r\n\r\n",
    "two Host fields": _GET + b"Host: u\r\n\r\n",
    "two Host fields, the second invalid": _GET + b"Host: u u\r\n\r\n",
    "gzip, chunked": b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
    b"0\r\n\r\n",
    "chunked twice": b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "a coding llhttp refuses and an invalid Host": b"POST / HTTP/1.1\r\nHost: t t\r\n"
    b"Transfer-Encoding: gzip\r\n\r\n",
    "Chunked in capitals": b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: CHUNKED\r\n\r\n"
    b"3\r\nabc\r\n0\r\n\r\n",
    "chunk extensions with whitespace": b"POST / HTTP/1.1\r\nHost: t\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n3 ; a = b\r\nabc\r\n0\r\n\r\n" + _GET + b"\r\n",
    "a 21-digit Content-Length": _GET + b"Content-Length: " + b"1" * 21 + b"\r\n\r\n",
    "a Content-Length past 2**64": _GET + b"Content-Length: 99999999999999999999\r\n\r\n",
    "a 20-digit Content-Length of a small value": _body_of_3_then_get(digits=20),
    "a 21-digit Content-Length of a small value": _body_of_3_then_get(digits=21),
    "trailing whitespace in a value": _GET + b"X: a \t\r\n\r\n" + _GET + b"\r\n",
    "an upgrade with a body": b"POST / HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\n"
    b"Upgrade: x\r\nContent-Length: 3\r\n\r\nabc" + _GET + b"\r\n",
    "an upgrade, then another request": _GET + b"Connection: Upgrade\r\nUpgrade: websocket\r\n"
    b"\r\n" + _GET + b"\r\n",
    "HTTP/1.0 with keep-alive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
    + _GET
    + b"\r\n",
    "Connection: close among others": _GET + b"Connection: foo, CLOSE\r\n\r\n" + _GET + b"\r\n",
    "Expect on HTTP/1.0": b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
    "Expect among others": b"POST / HTTP/1.1\r\nHost: t\r\nExpect: foo, 100-Continue\r\n"
    b"Content-Length: 2\r\n\r\nab",
    "a space before the colon": _GET + b"X : y\r\n\r\n",
    "an empty field name": _GET + b": y\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(PARSER_DISAGREEMENTS))
def test_heads_the_parsers_judge_differently(name: str) -> None:
    for case in _with_each_behaviour(PARSER_DISAGREEMENTS[name]):
        assert_same(case)


#: Content-Lengths with as many digits as Python's ``int`` reads (4,300) and more, in heads
#: too large for the harness's limits: served with room for them. (h11 refuses more than 20
#: digits; llhttp takes any number of leading zeros.)
LONG_CONTENT_LENGTHS = {
    f"{digits:,} digits": _body_of_3_then_get(digits) for digits in (4_300, 4_301, 10_000)
}
ROOMY_HEAD = 16 * 1024


@pytest.mark.parametrize("name", sorted(LONG_CONTENT_LENGTHS))
def test_content_lengths_longer_than_python_reads(name: str) -> None:
    h11 = attrs.evolve(H11, max_header_size=ROOMY_HEAD)
    llhttp = attrs.evolve(LLHTTP, max_header_size=ROOMY_HEAD)
    limits = attrs.evolve(LIMITS, max_head_size=ROOMY_HEAD)
    for case in _with_each_behaviour(LONG_CONTENT_LENGTHS[name]):
        by_h11, by_llhttp = serve(case, h11), serve(case, llhttp)
        check(by_h11, limits)
        check(by_llhttp, limits)
        assert outcome(by_llhttp) == outcome(by_h11)


def _target(target: bytes) -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n\r\n" + _GET + b"\r\n"


#: Targets both parsers accept on their own, held to the shared head check's rules: each
#: with the status of its answer. (The calls compared include ``request.host``.)
TARGET_RULES = {
    "a fragment": (_target(b"/a#b"), 400),
    "a fragment after the query": (_target(b"/a?b=1#c"), 400),
    "an empty fragment": (_target(b"/#"), 400),
    "a fragment in an absolute-form target": (_target(b"http://t/a#b"), 400),
    "%00 in the path": (_target(b"/a%00.txt"), 400),
    "%00 in a query value": (_target(b"/a?b=%00"), 400),
    "%00 in a query name": (_target(b"/a?%00=b"), 400),
    "%00 in an absolute-form target": (_target(b"http://t/%00"), 400),
    "escapes that are no NUL": (_target(b"/a%2500?b=%25%30%30&c=%0a"), 200),
    "an absolute-form target naming another host": (_target(b"http://other.example/a"), 200),
    "an absolute-form target naming an invalid host": (_target(b"http://a%zz/"), 400),
}


@pytest.mark.parametrize("name", sorted(TARGET_RULES))
def test_the_target_rules_hold_on_both_parsers(name: str) -> None:
    data, status = TARGET_RULES[name]
    for case in _with_each_behaviour(data):
        assert_same(case)
    run = serve(ConnectionInput(data), LLHTTP)
    assert parse_responses(run.output, [call.method for call in run.calls])[0][0].status == status


@fuzz_settings(500)
@given(connection_inputs())
def test_generated_connections(case: ConnectionInput) -> None:
    assert_same(case)
