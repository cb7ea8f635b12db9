"""The JSON body parser (one decoder for every body) reads exactly what
``json.loads(body, parse_constant=...)`` reads, errors included, whatever the bytes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz._settings import fuzz_settings
from trioframe._extract.sources import (
    MAX_JSON_DEPTH,
    _deeper_than_allowed,
    _parse_json,
    _reject_constant,
    json_depth,
)

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le"])


def _outcome(parse: Any, body: bytes) -> tuple[str, Any]:
    try:
        return ("value", parse(body))
    except Exception as exc:  # the same kind and the same message, or a difference
        return (type(exc).__name__, str(exc))


def _reference(body: bytes) -> Any:
    return json.loads(body, parse_constant=_reject_constant)


@fuzz_settings(300)
@given(value=_JSON_VALUES, encoding=_ENCODINGS)
def test_every_json_text_in_every_encoding_reads_the_same(value: Any, encoding: str) -> None:
    body = json.dumps(value, ensure_ascii=False).encode(encoding)
    assert _outcome(_parse_json, body) == _outcome(_reference, body)


@fuzz_settings(300)
@given(body=st.binary(max_size=64))
@example(b"NaN")
@example(b"[1, -Infinity]")
@example(b"\xef\xbb\xbf{}")
@example(b"\xff\xfe")
@example(b"")
@example(b'"\\ud800"')
def test_any_bytes_read_the_same(body: bytes) -> None:
    assert _outcome(_parse_json, body) == _outcome(_reference, body)


def _nested_value(levels: int) -> Any:
    value: Any = "[{"
    for level in range(levels):
        value = [value] if level % 2 else {"{": value}
    return value


@fuzz_settings(300)
@given(
    levels=st.integers(min_value=MAX_JSON_DEPTH - 3, max_value=MAX_JSON_DEPTH + 3),
    padding=st.lists(_JSON_VALUES, max_size=3),
    encoding=_ENCODINGS,
)
def test_the_bracket_count_shortcut_agrees_with_the_depth_scan(
    levels: int, padding: list[Any], encoding: str
) -> None:
    """Around the limit, with brackets in strings and in siblings, in every encoding JSON
    reads: the depth check answers as the full scan does."""
    document = json.dumps([_nested_value(levels), *padding], ensure_ascii=False)
    body = document.encode(encoding)
    deepest = json_depth(document.encode("utf-8", "surrogatepass"))
    assert _deeper_than_allowed(body) == (deepest > MAX_JSON_DEPTH)
