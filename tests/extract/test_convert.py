"""The text and JSON converters and the JSON depth scan (sans-I/O, synchronous)."""

from __future__ import annotations

import json
import random

import attrs
import pytest

from trioframe._codec.convert import JSON_CONVERTER, TEXT_CONVERTER, describe_failure
from trioframe._extract.json_text import json_depth


@attrs.define
class Sample:
    n: int
    x: float
    b: bool
    s: str


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("42", 42), ("-7", -7), ("+3", 3)],
)
def test_text_ints(raw: str, expected: int) -> None:
    assert TEXT_CONVERTER.structure(raw, int) == expected


@pytest.mark.parametrize("raw", ["", " 1", "1 ", "1_000", "0x10", "1.0", "٣"])
def test_text_ints_are_strict(raw: str) -> None:
    with pytest.raises(ValueError, match="expected an integer"):
        TEXT_CONVERTER.structure(raw, int)


def test_text_floats_must_be_finite() -> None:
    assert TEXT_CONVERTER.structure("2.5", float) == 2.5
    for raw in ["nan", "inf", "-Infinity", "x"]:
        with pytest.raises(ValueError):
            TEXT_CONVERTER.structure(raw, float)


def test_json_types_are_checked_not_coerced() -> None:
    good = JSON_CONVERTER.structure({"n": 1, "x": 2, "b": False, "s": "t"}, Sample)
    assert good == Sample(1, 2.0, False, "t")
    with pytest.raises(Exception) as info:
        JSON_CONVERTER.structure({"n": "1", "x": "2", "b": "false", "s": 3}, Sample)
    assert sorted(describe_failure(info.value, "body")) == [
        "body.b: expected a boolean",
        "body.n: expected an integer",
        "body.s: expected a string",
        "body.x: expected a number",
    ]
    with pytest.raises(Exception, match="expected an integer"):
        JSON_CONVERTER.structure(True, int)  # bool is not an int in JSON


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        (b"1", 0),
        (b'"[[["', 0),
        (b"[]", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["[[[[", "\\"]]"]', 1),
        (b'["\\\\", "[", "\\\\\\"["]', 1),  # escaped backslashes before a quote
        (b'[{"[": "]]"}, [[{}], "}"]]', 4),
        (b"[" * 50 + b"]" * 50, 50),
        (b"[[[]], [[[[]]]], []]", 5),
        (b"[" * 99 + b"[],[[]]" + b"]" * 99, 101),
    ],
)
def test_json_depth_counts_brackets_outside_strings(body: bytes, depth: int) -> None:
    assert json_depth(body) == depth


def _nesting(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


_AWKWARD = '[]{}"\\'


def _document(rng: random.Random, depth: int) -> object:
    """A random JSON value nested at most ``depth`` deep, with strings full of brackets,
    quotes and backslashes."""
    if depth == 0 or rng.random() < 0.2:
        return "".join(rng.choice(_AWKWARD + "ax") for _ in range(rng.randrange(6)))
    items = [_document(rng, depth - 1) for _ in range(rng.randrange(4))]
    if rng.random() < 0.5:
        return items
    return {f"k{i}{rng.choice(_AWKWARD)}": item for i, item in enumerate(items)}


def test_json_depth_agrees_with_the_parsed_value() -> None:
    rng = random.Random(13)
    for _ in range(2000):
        value = _document(rng, rng.randrange(1, 8))
        for encoded in (json.dumps(value), json.dumps(value, indent=1, ensure_ascii=False)):
            assert json_depth(encoded.encode()) == _nesting(value), encoded
