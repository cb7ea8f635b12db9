"""The JSON body parser reads exactly what ``json.loads(body, parse_constant=...)`` reads,
errors included, whatever the bytes: the standard library's decoder (one decoder for every
body), with the garbage collector paused for a large body or not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz._settings import fuzz_settings
from trioframe._extract.json_text import (
    MAX_JSON_DEPTH,
    decode_json_by_stdlib,
    deeper_than_allowed,
    json_depth,
    parse_json,
    reject_constant,
)

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le"])


def _outcome(parse: Any, body: bytes) -> tuple[str, Any]:
    try:
        return ("value", _exact(parse(body)))
    except Exception as exc:  # the same kind and the same message, or a difference
        return (type(exc).__name__, str(exc))


def _exact(value: Any) -> Any:
    """``value`` with every part's type and text, and the order of every object's keys:
    ``1``, ``1.0`` and ``True`` differ, and so do ``0.0`` and ``-0.0``."""
    if isinstance(value, dict):
        return ("object", [(_exact(key), _exact(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("array", [_exact(item) for item in value])
    return (type(value).__name__, repr(value))


#: The body reader, and the decoder it runs.
_PARSERS = {"parse_json": parse_json, "stdlib": decode_json_by_stdlib}


def _reference(body: bytes) -> Any:
    return json.loads(body, parse_constant=reject_constant)


@pytest.mark.parametrize("parser", sorted(_PARSERS))
@fuzz_settings(300)
@given(value=_JSON_VALUES, encoding=_ENCODINGS)
def test_every_json_text_in_every_encoding_reads_the_same(
    parser: str, value: Any, encoding: str
) -> None:
    body = json.dumps(value, ensure_ascii=False).encode(encoding)
    assert _outcome(_PARSERS[parser], body) == _outcome(_reference, body)


@fuzz_settings(300)
@given(body=st.binary(max_size=64))
@example(b"NaN")
@example(b"[1, -Infinity]")
@example(b"\xef\xbb\xbf{}")
@example(b"\xff\xfe")
@example(b"")
@example(b'"\\ud800"')
@pytest.mark.parametrize("parser", sorted(_PARSERS))
def test_any_bytes_read_the_same(parser: str, body: bytes) -> None:
    assert _outcome(_PARSERS[parser], body) == _outcome(_reference, body)


# Texts near JSON's edges, where two parsers may part: number spellings, floats out of range,
# integers around Python's digit limit, escapes (lone and paired surrogates), raw characters
# (controls, lone surrogates as bytes), whitespace JSON allows and does not, repeated keys,
# constants, trailing data, a BOM, deep nesting, stray bytes.
_SPACE = " \t\n\r"
_NOT_SPACE = "\x0c\x0b\xa0\u2028\x00"
_NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?", fullmatch=True
) | st.sampled_from(
    [
        *("-0", "-0.0", "1e400", "-1e400", "1e-400", "1.7976931348623157e308"),
        *("1.7976931348623159e308", "9007199254740993", "NaN", "Infinity", "-Infinity"),
    ]
)
_NOT_NUMBER = st.sampled_from(
    ["01", "-01", "1.", ".5", "+1", "1e", "-", "1E+", "0x10", "1_000", "nan", "inf"]
)
_BIG_INTEGER = st.builds(
    lambda sign, digits: sign + "7" * digits, st.sampled_from(["", "-"]), st.integers(4290, 4310)
)
_ESCAPE = st.sampled_from(
    [
        *('\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u0000"),
        *("\\ud800", "\\udc00", "\\uD834\\uDD1E", "\\ud834\\u0041", "\\udc00\\ud800"),
    ]
) | st.from_regex(r"\\u[0-9a-fA-F]{4}", fullmatch=True)
_NOT_ESCAPE = st.sampled_from(["\\x", "\\u12", "\\", "\x01", "\x1f"])
#: Lone surrogates included (the standard library reads them from UTF-8 bytes).
_CHARACTER = st.characters(codec=None, exclude_categories=(), min_codepoint=0x20)


def _texts(broken: bool) -> st.SearchStrategy[str]:
    """JSON texts; ``broken``: with spellings JSON refuses among them."""
    space = st.text(st.sampled_from(_SPACE + _NOT_SPACE if broken else _SPACE), max_size=2)
    parts = (_ESCAPE | _NOT_ESCAPE) if broken else _ESCAPE
    string = st.lists(parts | _CHARACTER, max_size=6).map(lambda p: '"' + "".join(p) + '"')
    scalar = _NUMBER | _BIG_INTEGER | string | st.sampled_from(["true", "false", "null"])
    if broken:
        scalar |= _NOT_NUMBER | st.sampled_from(["True", "nul", "[", "{", "}", ":", "a"])
    key = string | st.sampled_from(['"a"', '"b"'])  # repeated keys
    spaced = st.builds(lambda a, t, b: a + t + b, space, st.deferred(lambda: text), space)
    array = st.lists(spaced, max_size=4).map(lambda items: "[" + ",".join(items) + "]")
    members = st.lists(st.tuples(key, spaced).map(":".join), max_size=4)
    text: st.SearchStrategy[str] = st.one_of(
        scalar, scalar, array, members.map(lambda pairs: "{" + ",".join(pairs) + "}")
    )
    return st.builds(lambda a, t, b: a + t + b, space, text, space)


_GOOD_TEXTS = _texts(broken=False)
_BROKEN_TEXTS = _texts(broken=True)


@st.composite
def _edge_body(draw: st.DrawFn) -> bytes:
    text = draw(_BROKEN_TEXTS if draw(st.integers(0, 3)) == 0 else _GOOD_TEXTS)
    if draw(st.integers(0, 9)) == 0:
        text += draw(st.sampled_from([" x", "]", ",", "\x00", "[]"]))  # trailing data
    levels = draw(st.sampled_from([0, 0, 0, 0, 0, 99, 101, 995, 1005, 3000]))
    text = "[" * levels + text + "]" * levels
    encoding = draw(st.sampled_from(["utf-8"] * 8 + ["utf-8-sig", "utf-16-le"]))
    body = text.encode(encoding, "surrogatepass")
    if draw(st.integers(0, 19)) == 0:  # a stray byte anywhere: invalid UTF-8, a NUL
        at = draw(st.integers(0, len(body)))
        body = body[:at] + bytes([draw(st.integers(0, 255))]) + body[at:]
    return body


@pytest.mark.parametrize("parser", sorted(_PARSERS))
@fuzz_settings(1500)
@given(body=_edge_body())
@example(b'{"a": 1, "b": 2, "a": 3}')
@example(b'["\\ud800", "\\udc00\\ud800", "\xed\xa0\x80"]')
@example(b"[1e400, 1]")
@example(b"[" + b"9" * 4300 + b", -" + b"9" * 4300 + b"]")
@example(b"[" + b"9" * 4301 + b"]")
@example(b"[1]\x0c")
@example(b"\xef\xbb\xbf[1]")
def test_json_edges_read_the_same(parser: str, body: bytes) -> None:
    assert _outcome(_PARSERS[parser], body) == _outcome(_reference, body)


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
    assert deeper_than_allowed(body) == (deepest > MAX_JSON_DEPTH)
