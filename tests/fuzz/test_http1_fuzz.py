"""Fuzzing the HTTP/1.1 server: byte streams through the real connection code, judged by an
independent oracle.

What runs
    Each example is one connection: ``Server(router, ("127.0.0.1", 0), config)
    .handle_stream(...)`` over ``trio.testing.memory_stream_pair()``, in its own trio run
    under ``MockClock(autojump_threshold=0)`` (timeouts fire at once in virtual time; a
    connection still open after 600 virtual seconds is a hang). The client sends a byte
    stream cut into writes (all at once, one byte at a time, or a drawn pattern), may then
    close its sending side, and reads everything until the server closes. The app is one
    middleware that records every call ``(method, target, body)`` and behaves as drawn: read
    the body and answer a small, empty (204) or streamed body; leave the body unread (drain
    or close); read one piece; answer 404. Limits are small (``http1_harness.CONFIG``) so
    inputs reach them.

    The byte streams (``http1_inputs.py``) come from the seed corpus
    (``corpus/http1/*.http``), from a structured generator (request line, fields with
    separator and line-end variants, Content-Length / chunked framing with extensions, size
    formats and trailers, Expect, Connection, bodies holding request-looking text), or both,
    then get up to four mutations (bit flips; inserted CR, LF, SP, HTAB, NUL, DEL, ``;``,
    ``:``...; deletions; duplications; truncation).

The oracle (``http1_harness.check``)
    (a) No exception escapes ``handle_stream``, and the ``trioframe`` logger records no ERROR
        with a traceback.
    (b) The output parses strictly as HTTP/1.1 responses (``responses.py``): one per finished
        handler call with the status the handler chose, then at most one answer of the
        server's own. Every 4xx/5xx carries the standard JSON error body ``{"status",
        "error", "message"}``; every error the server chose says ``Connection: close`` and
        is the last thing sent. ``100 Continue`` only for a request that expects it.
    (c) ``reference.py`` parses the same bytes with RFC 9112's strict rules (and the
        project's: obs-fold, bare CR/LF, CL+TE, duplicate CL are refused). The handler
        calls must be a prefix of its accepted requests with equal bodies: no request
        hidden in a body or after a malformed request reaches a handler. Where the server
        stops earlier, it answered an error, announced ``Connection: close``, hit a limit,
        or timed out on bytes that are really missing; it does not refuse a request the
        reference says it must serve, does not wait for the header timeout on a head that
        ends with an LF blank line, and sends nothing unsolicited.

Running it
    ``pytest tests/fuzz`` runs every target at scale 1 (this one: 1000 examples, about 12 s of CPU).
    ``nox -s fuzz`` runs every test under ``tests/fuzz/`` with ``TRIOFRAME_FUZZ_SCALE``
    (default 8, a few minutes; ``TRIOFRAME_FUZZ_SCALE=50 nox -s fuzz`` for a longer run).
    Hypothesis prints a failing case as a ``ConnectionInput(...)``: paste it into
    ``REPRODUCERS`` below to keep it as a regression test.

Adding a seed
    Write the raw bytes, exactly as a client sends them (CRLF line ends), to
    ``corpus/http1/<name>.http`` (``printf`` or ``pathlib.Path.write_bytes``; the directory's
    ``.gitattributes`` keeps git from touching line ends), and add the reference parser's
    verdict for it to ``SEED_VERDICTS`` in ``test_reference.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from tests.fuzz._settings import fuzz_settings
from tests.fuzz.http1_harness import Behaviour, ConnectionInput, check, serve
from tests.fuzz.http1_inputs import connection_inputs


@fuzz_settings(1000)
@given(connection_inputs())
def test_http1_connection(case: ConnectionInput) -> None:
    check(serve(case))


_CHUNKED = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
_NEXT = b"GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"

#: Cases the oracle failed on, each named after the hole it found.
REPRODUCERS: dict[str, ConnectionInput] = {
    # h11 ends the trailer section at a bare LF, so the bytes after it are a new request.
    "trailer section ended by a bare LF": ConnectionInput(_CHUNKED + b"0\r\nX: y\r\n\n" + _NEXT),
    "bare LF inside the trailer section": ConnectionInput(
        _CHUNKED + b"0\r\nX: y\nZ: w\r\n\r\n" + _NEXT
    ),
    "obs-fold in the trailer section": ConnectionInput(
        _CHUNKED + b"0\r\nX: y\r\n z\r\n\r\n" + _NEXT
    ),
    "control character in a trailer": ConnectionInput(_CHUNKED + b"0\r\nX: a\x01b\r\n\r\n" + _NEXT),
    "CR in a chunk extension": ConnectionInput(_CHUNKED + b"5;a\rb\r\nhello\r\n0\r\n\r\n" + _NEXT),
    "NUL in a chunk extension": ConnectionInput(
        _CHUNKED + b"5;a\x00\r\nhello\r\n0\r\n\r\n" + _NEXT
    ),
    "DEL in a chunk extension": ConnectionInput(
        _CHUNKED + b"5;a\x7f\r\nhello\r\n0\r\n\r\n" + _NEXT
    ),
    "space after the chunk size": ConnectionInput(_CHUNKED + b"5 \r\nhello\r\n0\r\n\r\n" + _NEXT),
    "tab after the last chunk's size": ConnectionInput(_CHUNKED + b"0\t\r\n\r\n" + _NEXT),
    # The head is only cut at CRLF CRLF: an LF-only head waits for the header timeout.
    "head with bare-LF line ends": ConnectionInput(b"GET / HTTP/1.1\nHost: t\nX: y\n\n"),
    # A 2xx answer to CONNECT makes h11 switch protocols; sending the body then raises.
    "CONNECT reaches the handler": ConnectionInput(b"CONNECT / HTTP/1.1\r\nHost: t\r\n\r\n"),
    "invalid Host value": ConnectionInput(b"GET / HTTP/1.1\r\nHost: t t\r\n\r\n"),
    "HTTP/1.2 request without Host": ConnectionInput(b"GET / HTTP/1.2\r\n\r\n"),
    # A second head that never completes is closed on silently (the first one gets 408).
    "head timeout after a first response": ConnectionInput(
        b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET  / HTTP/1.1\r\n"
    ),
    # The handler answers without reading; draining the rest of the body meets the end of
    # the stream, and the server adds a 400 to a request it already answered.
    "second answer after draining meets the end of the stream": ConnectionInput(
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\nab",
        close_write=True,
        behaviours=(Behaviour.UNREAD,),
    ),
    # Found during the protocol-neutral reshape: middleware reads a body past max_body_size
    # (512 here); the 413 must end the connection, as a body over the limit always does.
    "413 from the running total keeps the connection": ConnectionInput(
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 600\r\n\r\n"
        + b"a" * 600
        + b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
        behaviours=(Behaviour.READ,),
    ),
    # Found by the fuzzer in CI (a harness bug, not the server's): the handler reads a body the
    # client holds back for 100 Continue and never sends; the 100 goes out, then the body
    # timeout's 408, for a call that never finished. The oracle only accepted a 100 before
    # the response of a finished call.
    "100 Continue, then a body timeout": ConnectionInput(
        b"POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
        b"Expect: 100-continue\r\n\r\n"
    ),
}


@pytest.mark.parametrize("name", REPRODUCERS)
def test_reproducer(name: str) -> None:
    check(serve(REPRODUCERS[name]))
