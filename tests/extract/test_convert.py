"""The text and JSON converters and the JSON depth scan (sans-I/O, synchronous)."""

from __future__ import annotations

import attrs
import pytest

from trioframe._extract.convert import JSON_CONVERTER, TEXT_CONVERTER, describe_failure
from trioframe._extract.sources import json_depth


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
        (b"[]", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["[[[[", "\\"]]"]', 1),
        (b"[" * 50 + b"]" * 50, 50),
    ],
)
def test_json_depth_ignores_brackets_inside_strings(body: bytes, depth: int) -> None:
    assert json_depth(body) == depth
