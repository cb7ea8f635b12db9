"""The fuzz oracle's own parts: the reference request parser, the response parser, and
``check`` on runs made up by hand (a broken oracle would let every hole through)."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from tests.fuzz.http1_harness import (
    LIMITS,
    Behaviour,
    Call,
    ConnectionInput,
    Run,
    check,
    serve,
)
from tests.fuzz.http1_inputs import CORPUS
from tests.fuzz.reference import Limits, parse_stream
from tests.fuzz.responses import MalformedOutput, parse_responses

#: What the reference makes of each seed: accepted requests, stop kind, part of the reason.
SEED_VERDICTS = {
    "bare-cr-head": (0, "rejected", "header section: bare CR"),
    "bare-lf-head": (0, "rejected", "request line: bare LF"),
    "absolute-form-names-the-host": (3, "end", ""),
    "body-holds-a-request": (2, "end", ""),
    "body-truncated": (0, "incomplete", ""),
    "chunk-bare-lf-after-data": (0, "rejected", "chunk data not followed by CRLF"),
    "chunk-data-too-long": (0, "rejected", "chunk data not followed by CRLF"),
    "chunk-extension-cr": (0, "rejected", "chunk size line: bare CR"),
    "chunk-extension-del": (0, "rejected", "not a chunk extension: b'\\x7f'"),
    "chunk-extension-nul": (0, "rejected", "not a chunk extension: b'=\\x00'"),
    "chunk-size-hex-prefix": (0, "rejected", "not a chunk extension: b'x5'"),
    "chunk-size-junk": (0, "rejected", "not a chunk extension: b'x'"),
    "chunk-size-space": (0, "rejected", "not a chunk extension: b' '"),
    "chunked-body-holds-a-request": (2, "end", ""),
    "chunked-extensions-trailers": (2, "end", ""),
    "chunked-uppercase-hex": (2, "end", ""),
    "cl-te": (0, "rejected", "both Content-Length and Transfer-Encoding"),
    "connect": (0, "rejected", "CONNECT needs authority-form"),
    "connection-close-then-more": (2, "end", ""),
    "content-length-21-digits": (2, "end", ""),
    "content-length-list": (0, "rejected", "more than one Content-Length, or an invalid one"),
    "content-length-signed": (0, "rejected", "more than one Content-Length, or an invalid one"),
    "duplicate-content-length": (0, "rejected", "more than one Content-Length"),
    "duplicate-host": (0, "rejected", "more than one Host"),
    "expect-100-continue-chunked": (2, "end", ""),
    "expect-100-continue": (2, "end", ""),
    "fragment-in-target": (2, "end", ""),  # the first one optional (below)
    "get": (1, "end", ""),
    "http10-keep-alive": (2, "end", ""),
    "http10-post": (2, "end", ""),
    "http2-preface": (0, "rejected", "not an HTTP/1.x version"),
    "leading-empty-lines": (2, "end", ""),
    "many-methods": (4, "end", ""),
    "missing-host": (0, "rejected", "request without Host"),
    "nul-escape-in-path": (2, "end", ""),  # the first one optional (below)
    "nul-escape-in-query": (2, "end", ""),  # the first one optional (below)
    "nul-in-header": (0, "rejected", "header section: control character"),
    "obs-fold-header": (0, "rejected", "header section: obs-fold"),
    "pipelined-gets": (3, "end", ""),
    "post-content-length": (2, "end", ""),
    "post-empty-content-length": (2, "end", ""),
    "request-line-double-space": (0, "rejected", "not three parts split by single spaces"),
    "te-chunked-identity": (0, "rejected", "Transfer-Encoding other than one 'chunked'"),
    "te-cl": (0, "rejected", "both Content-Length and Transfer-Encoding"),
    "te-http10": (0, "rejected", "Transfer-Encoding on HTTP/1.0"),
    "te-obs-fold": (0, "rejected", "header section: obs-fold"),
    "te-space-before-colon": (0, "rejected", "whitespace before the colon"),
    "te-tab-before-value": (2, "end", ""),
    "te-two-lines": (0, "rejected", "Transfer-Encoding other than one 'chunked'"),
    "te-xchunked": (0, "rejected", "Transfer-Encoding other than one 'chunked'"),
    "trailer-bare-lf-end": (0, "rejected", "trailer section: bare LF"),
    "trailer-bare-lf-line": (0, "rejected", "trailer section: bare LF"),
    "trailer-control-character": (0, "rejected", "trailer section: control character"),
    "trailer-obs-fold": (0, "rejected", "trailer section: obs-fold"),
    "upgrade-not-taken": (2, "end", ""),
    "whitespace-around-values": (2, "end", ""),
}

_CHUNKED = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"


def test_every_seed_has_a_verdict() -> None:
    assert set(CORPUS) == set(SEED_VERDICTS)


@pytest.mark.parametrize("name", sorted(SEED_VERDICTS))
def test_reference_verdict_on_seed(name: str) -> None:
    accepted, kind, reason = SEED_VERDICTS[name]
    parse = parse_stream(CORPUS[name], LIMITS)
    assert (len(parse.requests), parse.stop.kind) == (accepted, kind)
    assert reason in parse.stop.reason


@pytest.mark.parametrize(
    "name", ["fragment-in-target", "nul-escape-in-path", "nul-escape-in-query"]
)
def test_a_fragment_or_a_nul_escape_in_the_target_may_be_refused(name: str) -> None:
    first, second = parse_stream(CORPUS[name], LIMITS).requests
    assert not first.must_accept and second.must_accept


def test_the_reference_host_is_an_absolute_form_targets_authority_else_the_host_field() -> None:
    first, second, third = parse_stream(CORPUS["absolute-form-names-the-host"], LIMITS).requests
    assert (first.target, first.host) == ("/a?b", "other.example:8080")
    assert (second.target, second.host) == ("/next", "t")  # HTTP/1.0 without Host
    assert (third.target, third.host) == ("/last", "t")
    (request,) = parse_stream(b"GET / HTTP/1.0\r\n\r\n", LIMITS).requests
    assert request.host == ""


def test_reference_requests_carry_what_the_app_sees() -> None:
    data = b"\r\nPOST http://t:80?q=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
    data += _CHUNKED.replace(b"POST /", b"PUT /x?") + b'2;a="b c"\r\nde\r\n0\r\nT: v\r\n\r\n'
    first, second = parse_stream(data, LIMITS).requests
    assert (first.method, first.target, first.body, first.start) == ("POST", "/?q=1", b"abc", 2)
    assert (second.method, second.target, second.body) == ("PUT", "/x", b"de")
    assert first.must_accept and second.must_accept and second.end == len(data)


@pytest.mark.parametrize(
    "data",
    [
        b"GET /a|b HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET /%zz HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.2\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nExpect: fancy\r\n\r\n",
        _CHUNKED.replace(b": chunked", b": chunked ,") + b"0\r\n\r\n",
        _CHUNKED + b"5 ;a=b\r\nhello\r\n0\r\n\r\n",
        _CHUNKED + b"00000000000000005\r\nhello\r\n0\r\n\r\n",
    ],
)
def test_what_does_not_touch_framing_the_server_may_refuse(data: bytes) -> None:
    (request,) = parse_stream(data, LIMITS).requests
    assert not request.must_accept


def test_expect_100_continue_is_recorded_for_http11_only() -> None:
    data = b"PUT / HTTP/1.1\r\nHost: t\r\nExpect: 100-Continue,\r\nContent-Length: 0\r\n\r\n"
    data += b"PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"
    first, second = parse_stream(data, LIMITS).requests
    assert first.expects_continue and not second.expects_continue


def test_a_bare_lf_is_rejected_before_the_line_ends() -> None:
    stop = parse_stream(b"GET / HTTP/1.1\r\nHost: t\nX", LIMITS).stop
    assert (stop.kind, stop.offset, stop.reason) == ("rejected", 23, "header section: bare LF")


def test_a_cr_at_the_end_of_the_data_may_start_a_crlf() -> None:
    assert parse_stream(b"GET / HTTP/1.1\r", LIMITS).stop.kind == "incomplete"


def test_a_body_whose_head_was_accepted_keeps_the_head() -> None:
    stop = parse_stream(_CHUNKED + b"5\r\nhel", LIMITS).stop
    assert stop.kind == "incomplete" and stop.head is not None and stop.head.method == "POST"


_SMALL = Limits(max_head_size=64, max_request_line_size=20, max_header_count=2, max_body_size=4)


@pytest.mark.parametrize(("extra", "accepted"), [(-1, True), (0, True), (1, False)])
def test_request_line_limit(extra: int, accepted: bool) -> None:
    line = b"GET /" + b"a" * (20 - 14 + extra) + b" HTTP/1.1"
    assert len(line) == 20 + extra
    parse = parse_stream(line + b"\r\nHost: t\r\n\r\n", _SMALL)
    assert (bool(parse.requests), parse.stop.over_limit) == (accepted, not accepted)


@pytest.mark.parametrize(("extra", "accepted"), [(-1, True), (0, True), (1, False)])
def test_head_size_limit(extra: int, accepted: bool) -> None:
    head = b"GET / HTTP/1.1\r\nHost: t\r\nX: " + b"a" * (64 - 32 + extra) + b"\r\n\r\n"
    assert len(head) == 64 + extra
    assert bool(parse_stream(head, _SMALL).requests) == accepted


@pytest.mark.parametrize(("count", "accepted"), [(1, True), (2, True), (3, False)])
def test_header_count_limit(count: int, accepted: bool) -> None:
    head = b"GET / HTTP/1.1\r\nHost: t\r\n" + b"X: y\r\n" * (count - 1) + b"\r\n"
    assert bool(parse_stream(head, _SMALL).requests) == accepted


@pytest.mark.parametrize(("size", "accepted"), [(3, True), (4, True), (5, False)])
def test_body_size_limit(size: int, accepted: bool) -> None:
    length = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size
    chunked = _CHUNKED + b"2\r\nxx\r\n%x\r\n" % (size - 2) + b"x" * (size - 2) + b"\r\n0\r\n\r\n"
    for data in (length, chunked):
        parse = parse_stream(data, _SMALL)
        assert (bool(parse.requests), parse.stop.over_limit) == (accepted, not accepted)


# -- the response parser ------------------------------------------------------------------------
def test_responses_are_cut_by_their_framing() -> None:
    output = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"  # the answer to HEAD
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        b"HTTP/1.1 204 No Content\r\n\r\n"
        b"HTTP/1.1 200 OK\r\n\r\nuntil the close"
    )
    responses, interim = parse_responses(output, ["POST", "HEAD", "GET", "GET", "GET"])
    assert [r.body for r in responses] == [b"ok", b"", b"abc", b"", b"until the close"]
    assert responses[0].interim == (100,) and interim == ()


def test_a_response_cut_short_is_marked() -> None:
    output = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nab"
    (response,), _ = parse_responses(output, ["GET"])
    assert response.truncated


@pytest.mark.parametrize(
    "output",
    [
        b"HTTP/1.1 200 Fine\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 1\r\n\r\nx",
        b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n",
    ],
)
def test_malformed_output_is_refused(output: bytes) -> None:
    with pytest.raises(MalformedOutput):
        parse_responses(output, ["GET"])


# -- check, on runs made up by hand -------------------------------------------------------------
_OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


def _error_response(status: int) -> bytes:
    phrase = HTTPStatus(status).phrase.encode()
    body = b'{"status":%d,"error":"%s","message":"bad"}' % (status, phrase)
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (status, phrase, len(body), body)
    )


_BAD_REQUEST = _error_response(400)


def _run(data: bytes, calls: list[Call], output: bytes) -> Run:
    return Run(ConnectionInput(data), data, False, calls, output, [])


def _call(target: str, body: bytes | None = b"") -> Call:
    return Call("GET", target, "t", Behaviour.READ, body=body, answered=200)


def test_check_passes_a_connection_served_right() -> None:
    data = CORPUS["pipelined-gets"]
    check(serve(ConnectionInput(data)))
    check(serve(ConnectionInput(data, writes=(1,), close_write=True)))


def test_check_fails_a_request_smuggled_past_the_reference() -> None:
    data = _CHUNKED.replace(b"POST", b"GET") + b"0\r\nX: y\n\r\nGET /s HTTP/1.1\r\nHost: t\r\n\r\n"
    run = _run(data, [_call("/"), _call("/s")], _OK + _OK)
    with pytest.raises(AssertionError, match=r"request #1 \(GET /s\) reached the handler"):
        check(run)


def test_check_fails_a_host_other_than_the_references() -> None:
    data = CORPUS["absolute-form-names-the-host"]
    run = _run(data.partition(b"GET http://t")[0], [_call("/a?b")], _OK)
    with pytest.raises(AssertionError, match="for host 't', the reference parsed GET /a"):
        check(run)


def test_check_fails_a_body_the_reference_rejects() -> None:
    run = _run(_CHUNKED.replace(b"POST", b"GET") + b"0 \r\n\r\n", [_call("/")], _OK)
    with pytest.raises(AssertionError, match="read a complete body"):
        check(run)


def test_check_fails_an_error_that_keeps_the_connection() -> None:
    output = _BAD_REQUEST.replace(b"connection: close\r\n", b"")
    with pytest.raises(AssertionError, match="does not end the connection"):
        check(_run(b"GET  / HTTP/1.1\r\n\r\n", [], output))


def test_check_fails_a_refused_request_the_reference_accepts() -> None:
    with pytest.raises(AssertionError, match="which the reference accepts"):
        check(_run(CORPUS["get"], [], _BAD_REQUEST))


def test_check_passes_a_413_before_the_handler_for_a_body_over_the_limit() -> None:
    data = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 9999\r\n\r\n"
    check(_run(data, [], _error_response(413)))
    with pytest.raises(AssertionError, match="the reference accepts its head"):
        check(_run(data.replace(b"9999", b"9"), [], _error_response(400)))


def test_check_fails_a_silent_close_on_a_malformed_request() -> None:
    with pytest.raises(AssertionError, match="closed without answering"):
        check(_run(b"GET  / HTTP/1.1\r\n\r\n", [], b""))


def test_check_fails_a_logged_traceback() -> None:
    run = Run(ConnectionInput(b""), b"", False, [], b"", ["Traceback ..."])
    with pytest.raises(AssertionError, match="logged an error"):
        check(run)
