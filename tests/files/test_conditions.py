"""Preconditions in RFC 9110 order, ``If-Range``, and ``Content-Disposition``, table-driven."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioframe._files.conditions import Validators, evaluate, http_date_of, range_applies
from trioframe._files.disposition import content_disposition
from trioframe._files.static import _accepted_codings

MTIME = 1_700_000_000  # seconds
FILE = Validators(size=10, mtime_ns=MTIME * 1_000_000_000 + 123)
ETAG = FILE.etag
OTHER = '"other"'
BEFORE, AT, AFTER = http_date_of(MTIME - 1), http_date_of(MTIME), http_date_of(MTIME + 1)


def test_validators() -> None:
    assert ETAG.startswith('"') and ETAG.endswith('"') and not ETAG.startswith("W/")
    assert FILE.last_modified == AT == "Tue, 14 Nov 2023 22:13:20 GMT"
    assert Validators(10, MTIME * 10**9 + 1).etag != ETAG  # any change of the time: a new tag
    assert Validators(11, MTIME * 10**9 + 123).etag != ETAG


@pytest.mark.parametrize(
    ("method", "headers", "expected"),
    [
        ("GET", {}, None),
        # If-Match: strong comparison; * matches any current file
        ("GET", {"if-match": ETAG}, None),
        ("GET", {"if-match": f"{OTHER}, {ETAG}"}, None),
        ("GET", {"if-match": "*"}, None),
        ("GET", {"if-match": OTHER}, 412),
        ("GET", {"if-match": "W/" + ETAG}, 412),  # weak never matches strongly
        ("PUT", {"if-match": OTHER}, 412),
        ("GET", {"if-match": "not a tag"}, 412),
        # If-Unmodified-Since, only without If-Match
        ("GET", {"if-unmodified-since": AT}, None),
        ("GET", {"if-unmodified-since": AFTER}, None),
        ("GET", {"if-unmodified-since": BEFORE}, 412),
        ("GET", {"if-match": ETAG, "if-unmodified-since": BEFORE}, None),
        ("GET", {"if-unmodified-since": "yesterday"}, None),  # invalid date: ignored
        # If-None-Match: weak comparison, * ; 304 for GET/HEAD, 412 otherwise
        ("GET", {"if-none-match": ETAG}, 304),
        ("HEAD", {"if-none-match": ETAG}, 304),
        ("GET", {"if-none-match": "W/" + ETAG}, 304),
        ("GET", {"if-none-match": "*"}, 304),
        ("POST", {"if-none-match": ETAG}, 412),
        ("GET", {"if-none-match": OTHER}, None),
        # If-Modified-Since: only without If-None-Match, only GET/HEAD (RFC 9110 forbids
        # falling through to it when If-None-Match does not match)
        ("GET", {"if-modified-since": AT}, 304),
        ("GET", {"if-modified-since": AFTER}, 304),
        ("GET", {"if-modified-since": BEFORE}, None),
        ("POST", {"if-modified-since": AT}, None),
        ("GET", {"if-none-match": OTHER, "if-modified-since": AFTER}, None),
        ("GET", {"if-modified-since": "Sun, 06 Nov 1994 08:49:37"}, None),  # no zone: invalid
        # the order: If-Match's 412 before If-None-Match's 304
        ("GET", {"if-match": OTHER, "if-none-match": ETAG}, 412),
    ],
)
def test_preconditions(method: str, headers: dict[str, str], expected: int | None) -> None:
    assert evaluate(method, headers, FILE) == expected


@pytest.mark.parametrize(
    ("if_range", "applies"),
    [
        (None, True),
        (ETAG, True),
        ("W/" + ETAG, False),
        (OTHER, False),
        (AT, True),
        (AFTER, False),  # only the exact date
        (BEFORE, False),
        ("garbage", False),
    ],
)
def test_if_range(if_range: str | None, applies: bool) -> None:
    headers = {} if if_range is None else {"if-range": if_range}
    assert range_applies(headers, FILE) is applies


@pytest.mark.parametrize(
    ("filename", "download", "expected"),
    [
        (None, False, None),
        (None, True, "attachment"),
        ("report.pdf", False, 'inline; filename="report.pdf"'),
        ("report.pdf", True, 'attachment; filename="report.pdf"'),
        (
            "grüße €.txt",
            True,
            "attachment; filename=\"gr__e _.txt\"; filename*=UTF-8''gr%C3%BC%C3%9Fe%20%E2%82%AC.txt",
        ),
        (
            'a"b\\c%d.txt',
            True,
            "attachment; filename=\"a_b_c_d.txt\"; filename*=UTF-8''a%22b%5Cc%25d.txt",
        ),
        ("evil\r\nx: y", True, 'attachment; filename="evilx: y"'),
    ],
)
def test_content_disposition(filename: str | None, download: bool, expected: str | None) -> None:
    assert content_disposition(filename, download=download) == expected


HEADER_NAMES = ["if-match", "if-none-match", "if-modified-since", "if-unmodified-since"]


@given(
    values=st.dictionaries(st.sampled_from([*HEADER_NAMES, "if-range"]), st.text(max_size=60)),
    method=st.sampled_from(["GET", "HEAD", "POST"]),
)
def test_fuzzed_precondition_headers_never_crash(values: dict[str, str], method: str) -> None:
    assert evaluate(method, values, FILE) in (None, 304, 412)
    assert range_applies(values, FILE) in (True, False)


@given(st.text(max_size=80))
def test_fuzzed_accept_encoding_never_crashes(value: str) -> None:
    assert _accepted_codings(value) <= {"br", "gzip"}


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("gzip, br", {"gzip", "br"}),
        ("br;q=0, gzip;q=0.5", {"gzip"}),
        ("GZIP;Q=1", {"gzip"}),
        ("x-gzip", {"gzip"}),
        ("*", {"gzip", "br"}),
        ("gzip;q=zero", set()),
        ("identity, deflate", set()),
        (None, set()),
    ],
)
def test_accept_encoding(value: str | None, accepted: set[str]) -> None:
    assert _accepted_codings(value) == accepted
