"""``CookieJar.parse``: the incoming ``Cookie`` headers, and the jar's mapping API."""

from __future__ import annotations

import pytest

from trioframe import CookieJar, Response


def parse(*headers: str) -> dict[str, str]:
    return CookieJar.parse(list(headers)).to_dict()


def test_simple_pairs() -> None:
    assert parse("a=1; b=2") == {"a": "1", "b": "2"}


def test_spaces_and_tabs_are_trimmed() -> None:
    assert parse("  a = 1 ;\tb=2\t;c=3  ") == {"a": "1", "b": "2", "c": "3"}


def test_empty_pieces_are_skipped() -> None:
    assert parse(";; a=1;;  ; b=2;") == {"a": "1", "b": "2"}
    assert parse("") == {}
    assert parse() == {}


def test_pieces_without_a_name_are_skipped() -> None:
    assert parse("=x; a=1; flag; =; b=2") == {"a": "1", "b": "2"}


def test_empty_values_are_kept() -> None:
    assert parse("a=; b=2") == {"a": "", "b": "2"}


def test_quoted_values_are_unwrapped() -> None:
    assert parse('a="hello"; b=""; c="x') == {"a": "hello", "b": "", "c": '"x'}
    assert parse('d="') == {"d": '"'}


def test_equals_signs_inside_values_are_kept() -> None:
    assert parse("token=abc==; q=a=b=c") == {"token": "abc==", "q": "a=b=c"}


def test_first_occurrence_of_a_name_wins() -> None:
    assert parse("a=specific; b=1; a=general") == {"a": "specific", "b": "1"}


def test_several_headers_are_merged_in_order() -> None:
    assert parse("a=1; b=2", "c=3", "a=9; d=4") == {"a": "1", "b": "2", "c": "3", "d": "4"}


def test_names_are_case_sensitive() -> None:
    assert parse("A=1; a=2") == {"A": "1", "a": "2"}


def test_mapping_api() -> None:
    jar = CookieJar.parse(["b=2; a=1"])
    assert jar.get("a") == "1"
    assert jar.get("missing") is None
    assert jar.get("missing", "x") == "x"
    assert jar.contains("b") and not jar.contains("c")
    assert "a" in jar and "c" not in jar
    assert object() not in jar
    assert len(jar) == 2
    assert list(jar) == ["b", "a"]
    assert list(jar.items()) == [("b", "2"), ("a", "1")]
    assert jar["b"] == "2"
    with pytest.raises(KeyError):
        jar["c"]
    assert jar == {"b": "2", "a": "1"}
    assert repr(jar) == "CookieJar({'b': '2', 'a': '1'})"


def test_to_dict_is_a_copy() -> None:
    jar = CookieJar({"a": "1"})
    copy = jar.to_dict()
    copy["b"] = "2"
    assert jar.to_dict() == {"a": "1"}


def test_empty_jar() -> None:
    jar = CookieJar()
    assert len(jar) == 0 and list(jar) == [] and jar.get("a") is None


def test_response_json_of_a_jar_is_an_object_of_names_to_values() -> None:
    response = Response.json(CookieJar.parse(['a=1; b="two"']))
    assert response.body == b'{"a":"1","b":"two"}'
    assert Response.json({"cookies": CookieJar()}).body == b'{"cookies":{}}'
