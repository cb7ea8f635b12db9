"""``parse_range``: the Range header against a file size, table-driven and fuzzed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trioframe._files.ranges import MAX_RANGES, UNSATISFIABLE, parse_range

SIZE = 100


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-9", [(0, 9)]),
        ("bytes=90-", [(90, 99)]),
        ("bytes=-10", [(90, 99)]),
        ("bytes=-1000", [(0, 99)]),  # a suffix longer than the file: all of it
        ("bytes=95-200", [(95, 99)]),  # a last position past the end is cut to the end
        ("BYTES = 0-0", [(0, 0)]),
        ("bytes=0-9,20-29", [(0, 9), (20, 29)]),
        ("bytes=20-29, 0-9", [(0, 9), (20, 29)]),  # sorted
        ("bytes=0-9,5-15", [(0, 15)]),  # overlapping: merged
        ("bytes=0-9,10-19", [(0, 19)]),  # adjacent: merged
        ("bytes=0-9,,20-29", [(0, 9), (20, 29)]),  # empty elements are allowed
        ("bytes=100-", UNSATISFIABLE),
        ("bytes=100-200,300-", UNSATISFIABLE),
        ("bytes=-0", UNSATISFIABLE),
        ("bytes=100-200,0-0", [(0, 0)]),  # one satisfiable range is enough
        ("bytes=5-4", None),  # last before first: invalid, the whole file
        ("bytes=", None),
        ("bytes=,", None),
        ("bytes=a-b", None),
        ("bytes=+1-2", None),
        ("bytes=1_0-20", None),
        ("bytes=0-9,x", None),  # one invalid element: the whole header is ignored
        ("bytes=--1", None),
        ("bytes=1", None),
        ("items=0-9", None),
        ("0-9", None),
        ("bytes=٣-٤", None),  # non-ASCII digits
        (
            "bytes=" + ",".join(f"{n}-{n}" for n in range(0, 32, 2)),
            [(n, n) for n in range(0, 32, 2)],
        ),
        ("bytes=" + ",".join(f"{n}-{n}" for n in range(0, 34, 2)), None),  # 17 ranges
        ("bytes=" + ",".join(["0-0"] * 10_000), None),
    ],
)
def test_parse_range(header: str | None, expected: object) -> None:
    assert parse_range(header, SIZE) == expected


def test_limit_is_sixteen() -> None:
    assert MAX_RANGES == 16
    sixteen = "bytes=" + ",".join(["1-1"] * 16)
    assert parse_range(sixteen, SIZE) == [(1, 1)]  # sixteen: honoured (and merged)
    assert parse_range(sixteen + ",1-1", SIZE) is None  # seventeen: the whole file


def test_an_empty_file_satisfies_no_range() -> None:
    assert parse_range("bytes=0-", 0) is UNSATISFIABLE
    assert parse_range("bytes=-5", 0) is UNSATISFIABLE


@given(header=st.text(max_size=80), size=st.integers(min_value=0, max_value=10**6))
def test_fuzzed_headers_never_crash_and_answer_within_the_file(header: str, size: int) -> None:
    check_answer(parse_range(header, size), size)


specs = st.one_of(
    st.tuples(st.integers(0, 2000), st.one_of(st.none(), st.integers(0, 2000))).map(
        lambda p: f"{p[0]}-{'' if p[1] is None else p[1]}"
    ),
    st.integers(0, 2000).map(lambda n: f"-{n}"),
)


@given(parts=st.lists(specs, min_size=1, max_size=20), size=st.integers(0, 1500))
def test_fuzzed_range_sets_follow_rfc_9110(parts: list[str], size: int) -> None:
    answer = parse_range("bytes=" + ",".join(parts), size)
    check_answer(answer, size)
    if len(parts) > MAX_RANGES:
        assert answer is None
        return
    covered: set[int] = set()  # the bytes RFC 9110 says the set selects, counted one by one
    for part in parts:
        first_text, _, last_text = part.partition("-")
        if not first_text:
            covered.update(range(max(size - int(last_text), 0), size) if int(last_text) else ())
        elif last_text and int(last_text) < int(first_text):
            assert answer is None  # an invalid range: the header is ignored
            return
        else:
            last = size - 1 if not last_text else min(int(last_text), size - 1)
            covered.update(range(int(first_text), last + 1))
    if not covered:
        assert answer is UNSATISFIABLE
    else:
        assert isinstance(answer, list)
        assert {n for first, last in answer for n in range(first, last + 1)} == covered


def check_answer(answer: object, size: int) -> None:
    """Ranges inside the file, in order, neither overlapping nor touching, at most 16."""
    if answer is None or answer is UNSATISFIABLE:
        return
    assert isinstance(answer, list) and 1 <= len(answer) <= MAX_RANGES
    previous_last = -2
    for first, last in answer:
        assert 0 <= first <= last < size
        assert first > previous_last + 1
        previous_last = last
