"""One HTTP/1.1 connection served in memory by the real server code, and the oracle that
judges it (see the module docstring of ``test_http1_fuzz.py`` for what it checks).

``serve(case)`` runs ``Server.handle_stream`` over ``trio.testing.memory_stream_pair()``
under a ``MockClock`` that jumps ahead whenever every task waits, so timeouts fire at once in
virtual time and a connection that never ends is caught by ``HANG_SECONDS``. ``check(run)``
raises ``AssertionError`` naming the first broken rule.
"""

from __future__ import annotations

import enum
import json
import logging
import re
from collections.abc import AsyncIterator, Iterator
from http import HTTPStatus

import attrs
import trio
import trio.testing

from tests.fuzz.reference import Limits, Parse, ReferenceRequest, parse_stream
from tests.fuzz.responses import ServerResponse, parse_responses
from trioframe import Error, Next, Request, Response, Router, Server, ServerConfig

__all__ = ["CONFIG", "LIMITS", "Behaviour", "Call", "ConnectionInput", "Run", "check", "serve"]

#: Small limits, so that generated requests reach them.
CONFIG = ServerConfig(
    max_body_size=512,
    max_header_size=1024,
    max_request_line_size=256,
    max_header_count=16,
    max_drain_size=32,
    max_requests_per_connection=8,
)
LIMITS = Limits(
    max_head_size=CONFIG.max_header_size,
    max_request_line_size=CONFIG.max_request_line_size,
    max_header_count=CONFIG.max_header_count,
    max_body_size=CONFIG.max_body_size,
)
#: Virtual seconds after which a connection counts as hung: far past every server timeout
#: (the client sends everything at time 0 and always reads).
HANG_SECONDS = 600.0
_CLIENT = ("127.0.0.1", 40000)
_LF_BLANK_LINE = re.compile(rb"\n\r?\n")  # where a head read with LF line ends ends


class Behaviour(enum.Enum):
    """What the handler does with a request (the i-th request gets ``behaviours[i % n]``)."""

    READ = "read the body, answer a small body"
    READ_EMPTY = "read the body, answer 204"
    READ_STREAM = "read the body, answer a streamed body"
    UNREAD = "leave the body unread, answer a small body"
    UNREAD_ERROR = "leave the body unread, answer 404 with the standard error body"
    PARTIAL = "read one piece of the body, answer a small body"


_EXPECTED_BODY = {
    Behaviour.READ: b"ok",
    Behaviour.READ_EMPTY: b"",
    Behaviour.READ_STREAM: b"stream-body",
    Behaviour.UNREAD: b"ok",
    Behaviour.PARTIAL: b"ok",
}


@attrs.frozen
class ConnectionInput:
    """One fuzz case: the bytes the client sends, how it cuts them into writes (``writes``
    repeats: ``(1,)`` is one byte per write, ``()`` one write), whether it then closes its
    sending side, and the handler's behaviours."""

    data: bytes
    writes: tuple[int, ...] = ()
    close_write: bool = False
    behaviours: tuple[Behaviour, ...] = (Behaviour.READ,)

    def pieces(self) -> Iterator[bytes]:
        """The client's writes."""
        at, index = 0, 0
        while at < len(self.data):
            size = self.writes[index % len(self.writes)] if self.writes else len(self.data)
            yield self.data[at : at + size]
            at += size
            index += 1


@attrs.define
class Call:
    """One call of the handler."""

    method: str
    target: str
    host: str  # request.host
    behaviour: Behaviour
    body: bytes | None = None  # the whole body, when the handler read it to its end
    error: int | None = None  # the status of the Error raised while reading the body
    answered: int | None = None  # the status the handler answered


@attrs.frozen
class Run:
    """What happened on one connection."""

    case: ConnectionInput
    delivered: bytes  # what reached the server (a write after it closed does not)
    eof: bool  # the client closed its sending side after ``delivered``
    calls: list[Call]
    output: bytes
    logged: list[str]  # ERROR records with a traceback from the 'trioframe' logger


def _router(calls: list[Call], behaviours: tuple[Behaviour, ...]) -> Router:
    async def record(request: Request, next_: Next) -> Response:
        behaviour = behaviours[len(calls) % len(behaviours)]
        call = Call(str(request.method), str(request.uri), request.host, behaviour)
        calls.append(call)
        try:
            if behaviour in (Behaviour.READ, Behaviour.READ_EMPTY, Behaviour.READ_STREAM):
                call.body = await request.read_body()
            elif behaviour is Behaviour.PARTIAL:
                await request.body_reader()
        except Error as exc:
            call.error = exc.status
            raise
        if behaviour is Behaviour.READ_EMPTY:
            response = Response.new(204)
        elif behaviour is Behaviour.READ_STREAM:
            response = Response.stream(_stream_body())
        elif behaviour is Behaviour.UNREAD_ERROR:
            response = Response.error(404, "nothing here")
        else:
            response = Response.text("ok")
        call.answered = response.status
        return response

    return Router().middleware(record)


async def _stream_body() -> AsyncIterator[bytes]:
    yield b"stream-"
    await trio.lowlevel.checkpoint()
    yield b"body"


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(self.format(record))


def serve(case: ConnectionInput, config: ServerConfig = CONFIG) -> Run:
    """Serve ``case`` on one in-memory connection (its own trio run, virtual time), with
    ``config`` (``CONFIG`` with another ``http1_parser``, say)."""
    records = _ErrorRecords()
    logger = logging.getLogger("trioframe")
    logger.addHandler(records)
    try:
        clock = trio.testing.MockClock(autojump_threshold=0)
        return trio.run(_serve, case, config, records, clock=clock)
    finally:
        logger.removeHandler(records)


async def _serve(case: ConnectionInput, config: ServerConfig, records: _ErrorRecords) -> Run:
    calls: list[Call] = []
    server = Server(_router(calls, case.behaviours), ("127.0.0.1", 0), config)
    client, served = trio.testing.memory_stream_pair()
    output = bytearray()
    escaped: list[Exception] = []
    delivered = 0
    eof = False

    async def run_server() -> None:
        try:
            await server.handle_stream(served, _CLIENT)
        except Exception as exc:  # oracle (a): reported below with its own traceback
            escaped.append(exc)

    async def read_output() -> None:
        while chunk := await client.receive_some():
            output.extend(chunk)

    try:
        with trio.fail_after(HANG_SECONDS):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_server)
                nursery.start_soon(read_output)
                for piece in case.pieces():
                    try:
                        await client.send_all(piece)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        break
                    delivered += len(piece)  # send_all lets the server read this write alone
                else:
                    if case.close_write:
                        await client.send_eof()
                        eof = True
    except trio.TooSlowError:
        raise AssertionError(f"the connection was still open after {HANG_SECONDS} s") from None
    if escaped:
        raise escaped[0]
    return Run(case, case.data[:delivered], eof, calls, bytes(output), records.records)


# -- the oracle ---------------------------------------------------------------------------------
def check(run: Run, limits: Limits = LIMITS) -> None:
    """Raise ``AssertionError`` unless the server behaved on this connection, served with
    ``limits`` (those of ``CONFIG`` unless its config had others)."""
    assert not run.logged, "the server logged an error with a traceback:\n" + "\n".join(run.logged)
    reference = parse_stream(run.delivered, limits)
    heads = _check_calls(run, reference)
    responses, interim = parse_responses(run.output, [call.method for call in run.calls])
    assert not interim or run.eof, f"the output ends with {interim} and no final response"
    _check_responses(run, heads, responses)
    _check_stop(run, reference, responses)


def _check_calls(run: Run, reference: Parse) -> list[ReferenceRequest]:
    """Oracle (c): the calls are a prefix of the reference's requests, bodies equal. Returns
    the reference request of each call."""
    accepted, stop = reference.requests, reference.stop
    heads = list(accepted)
    if stop.head is not None:
        heads.append(stop.head)  # its head is fine; its body is not (yet)
    if len(run.calls) > len(heads):
        call = run.calls[len(heads)]
        raise AssertionError(
            f"request #{len(heads)} ({call.method} {call.target}) reached the handler; the "
            f"reference parser stops before it: {stop.kind}, {stop.reason} at offset "
            f"{stop.offset} ({_around(run.delivered, stop.offset)})"
        )
    for index, (call, expected) in enumerate(zip(run.calls, heads, strict=False)):
        assert (call.method, call.target, call.host) == (
            expected.method,
            expected.target,
            expected.host,
        ), (
            f"request #{index}: the handler got {call.method} {call.target} for host "
            f"{call.host!r}, the reference parsed {expected.method} {expected.target} for host "
            f"{expected.host!r}"
        )
        if call.body is None:
            continue
        assert index < len(accepted), (
            f"request #{index}: the handler read a complete body of {len(call.body)} bytes; "
            f"the reference: {stop.kind}, {stop.reason} at offset {stop.offset} "
            f"({_around(run.delivered, stop.offset)})"
        )
        assert call.body == expected.body, (
            f"request #{index}: body {call.body!r}, the reference parsed {expected.body!r}"
        )
    return heads[: len(run.calls)]


def _check_responses(
    run: Run, heads: list[ReferenceRequest], responses: list[ServerResponse]
) -> None:
    """Oracle (b): one response per finished call, then at most one error answer; statuses,
    bodies, error bodies and ``Connection: close`` as they must be."""
    calls = run.calls
    finished = [call for call in calls if call.error is not None or call.answered is not None]
    assert finished == calls[: len(finished)] and len(finished) >= len(calls) - 1, (
        "a handler other than the last one did not finish"
    )
    if run.eof and len(responses) == len(finished) - 1:
        finished = finished[:-1]  # the client left: its last answer may be cut off entirely
    assert len(finished) <= len(responses) <= len(finished) + 1, (
        f"{len(responses)} responses for {len(calls)} handler calls ({len(finished)} finished)"
    )
    for index, response in enumerate(responses):
        call = calls[index] if index < len(finished) else None
        last = index == len(responses) - 1
        assert not response.truncated or (run.eof and last), f"response #{index} is cut short"
        assert not response.closes or last, f"response #{index} says close, more follows"
        assert set(response.interim) <= {100} and len(response.interim) <= 1, (
            f"interim responses {response.interim} before response #{index}"
        )
        if response.interim:  # (also before the server's own answer to a cancelled call)
            assert index < len(heads) and heads[index].expects_continue, (
                f"100 Continue before response #{index}, whose request did not expect it"
            )
        if call is not None and call.answered is not None:
            assert response.status == call.answered, (
                f"response #{index} is {response.status}, the handler answered {call.answered}"
            )
            expected = _EXPECTED_BODY.get(call.behaviour)
            if expected is not None and call.method != "HEAD":
                # A body cut short by the client leaving (a close-delimited one looks whole).
                cut = run.eof and last and expected.startswith(response.body)
                assert response.body == expected or cut, f"response #{index}: {response.body!r}"
        else:
            # An error the server chose: a protocol error, a body limit, a timeout.
            assert response.status >= 400, f"response #{index} is {response.status}"
            assert call is None or response.status == call.error, (
                f"response #{index} is {response.status}, reading the body raised {call.error}"
            )
            assert response.closes and last, (
                f"the server's {response.status} (response #{index}) does not end the connection"
            )
        # The answer to a HEAD has no body, an error the server chose included (a body
        # timeout while a HEAD handler read its body, say: that call never finished).
        head_request = index < len(calls) and calls[index].method == "HEAD"
        if response.status >= 400 and not head_request:
            _check_error_body(response, index)


def _check_error_body(response: ServerResponse, index: int) -> None:
    status = response.status
    assert response.header(b"content-type") == b"application/json", (
        f"{status} (response #{index}) is not JSON"
    )
    document = json.loads(response.body)
    assert isinstance(document, dict), f"{status} (response #{index}) body {response.body!r}"
    assert set(document) in (
        {"status", "error", "message"},
        {"status", "error", "message", "errors"},
    )
    assert document["status"] == status and document["error"] == HTTPStatus(status).phrase, (
        f"{status} (response #{index}) body {response.body!r}"
    )
    assert isinstance(document["message"], str)


def _check_stop(run: Run, reference: Parse, responses: list[ServerResponse]) -> None:
    """Where the server stopped short of the reference, it answered an error or closed for a
    reason that holds: a close it announced, a limit, a timeout on missing bytes, the client
    leaving."""
    calls, accepted, stop = run.calls, reference.requests, reference.stop
    last_call = calls[-1] if calls else None
    if last_call is not None and (last_call.error is not None or last_call.answered is None):
        index = len(calls) - 1  # the last handler failed reading its body, or was cancelled
        assert last_call.error is not None or run.eof or len(responses) == len(calls), (
            f"the handler of request #{index} was cancelled and the server answered nothing"
        )
        if index < len(accepted):
            request = accepted[index]
            assert last_call.error is None or not request.must_accept, (
                f"reading the body of request #{index} failed with {last_call.error}, the "
                f"reference accepts it (body {request.body!r})"
            )
            assert last_call.error is not None or run.eof, (
                f"the handler of request #{index} was cancelled (a timeout) though the "
                f"reference has its whole body {request.body!r}"
            )
        return
    index = len(calls)  # the server handled every call; request #index is where it stopped
    finished_responses = len(calls) - (1 if run.eof and len(responses) < len(calls) else 0)
    answer = responses[finished_responses] if len(responses) > finished_responses else None
    if index > len(accepted):
        # The last handler answered a request whose body the reference did not accept.
        assert answer is None, (
            f"after its answer to request #{index - 1}, the server sent an unsolicited "
            f"{answer.status}: the rest of that body was {stop.kind} ({stop.reason})"
        )
        return
    if answer is None:
        if responses and responses[-1].closes:
            return  # the server announced the close
        if run.eof and (len(responses) < len(calls) or (responses and responses[-1].truncated)):
            return  # the client left while its last answer was being sent
        if run.eof and calls and calls[-1].method == "HEAD" and len(responses) == len(calls):
            # A half-close cancels a handler whose answer is still being sent; the answer
            # to a HEAD is all head, so being cut off after it shows no truncation.
            return
        assert index >= len(accepted), (
            f"the server closed without serving request #{index}, which the reference "
            f"accepts ({accepted[index].method} {accepted[index].target})"
        )
        assert stop.kind != "rejected", (
            f"the server closed without answering request #{index}, which the reference "
            f"rejects: {stop.reason} ({_around(run.delivered, stop.offset)})"
        )
        return
    if index < len(accepted):
        assert not accepted[index].must_accept, (
            f"the server answered {answer.status} to request #{index}, which the reference "
            f"accepts: {_around(run.delivered, accepted[index].start)}"
        )
        return
    if stop.kind == "end":
        after_last = run.delivered[accepted[-1].end if accepted else 0 :]
        assert answer.status == 408 and after_last, (
            f"the server answered {answer.status} after the last complete request"
        )  # a 408 for empty lines sent after it is fine
        return
    rest = run.delivered[stop.start :]
    assert stop.head is None or not stop.head.must_accept or stop.over_limit, (
        f"the server answered {answer.status} to request #{index} without calling the "
        f"handler; the reference accepts its head: {_around(run.delivered, stop.start)}"
    )
    if answer.status == 408 and stop.reason.endswith("bare LF") and stop.head is None:
        assert not _LF_BLANK_LINE.search(rest), (
            f"the server waited for the header timeout (408) on a head whose lines end with "
            f"LF and that ends with a blank line; the reference rejects it at once: "
            f"{stop.reason} ({_around(run.delivered, stop.offset)})"
        )


def _around(data: bytes, offset: int) -> str:
    """A short view of ``data`` around ``offset``."""
    return f"{data[max(0, offset - 24) : offset]!r} >>> {data[offset : offset + 24]!r}"
