"""Pattern syntax: what parses, what each malformed pattern reports, and prefix joining."""

from __future__ import annotations

import pytest

from trioframe._errors import ConfigurationError
from trioframe._routing.pattern import Segment, SegmentKind, parse_pattern, parse_prefix

LIT, PARAM, WILD = SegmentKind.LITERAL, SegmentKind.PARAM, SegmentKind.WILDCARD


def test_literal_and_params() -> None:
    p = parse_pattern("/users/{user_id}/posts/{post_id}")
    assert p.segments == (
        Segment(LIT, "users"),
        Segment(PARAM, "user_id"),
        Segment(LIT, "posts"),
        Segment(PARAM, "post_id"),
    )
    assert p.param_names == ("user_id", "post_id")
    assert not p.is_static


def test_wildcard_last() -> None:
    p = parse_pattern("/files/{*rest}")
    assert p.segments[-1] == Segment(WILD, "rest")
    assert p.param_names == ("rest",)


def test_root_is_one_empty_literal() -> None:
    p = parse_pattern("/")
    assert p.is_root and p.is_static
    assert p.segments == (Segment(LIT, ""),)


def test_trailing_slash_is_a_distinct_pattern() -> None:
    with_slash, without = parse_pattern("/users/"), parse_pattern("/users")
    assert with_slash.segments == (Segment(LIT, "users"), Segment(LIT, ""))
    assert with_slash.shape != without.shape


def test_shape_erases_parameter_names() -> None:
    assert parse_pattern("/u/{id}").shape == parse_pattern("/u/{uid}").shape
    assert parse_pattern("/u/{id}").shape != parse_pattern("/u/{*id}").shape


def test_keyword_like_names_are_identifiers() -> None:
    assert parse_pattern("/convert/{from}/{to}").param_names == ("from", "to")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("users", "start with '/'"),
        ("", "start with '/'"),
        ("/a/{}", "empty parameter name"),
        ("/{*}", "empty parameter name"),
        ("/{1abc}", "not a Python identifier"),
        ("/{a-b}", "not a Python identifier"),
        ("/{a b}", "not a Python identifier"),
        ("/{*rest}/more", "must be the last segment"),
        ("/{*rest}/", "must be the last segment"),
        ("/{a}/{a}", "used twice"),
        ("/{a}/{*a}", "used twice"),
        ("/a{b}", "mixes literal text"),
        ("/{a}b", "mixes literal text"),
        ("/{a}{b}", "mixes literal text"),
        ("/{a", "unbalanced braces"),
        ("/a}", "unbalanced braces"),
        ("/}a{", "unbalanced braces"),
        ("//", "empty segment"),
        ("/a//b", "empty segment"),
        ("/a//", "empty segment"),
    ],
)
def test_malformed_patterns_name_the_pattern(pattern: str, reason: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_pattern(pattern)
    assert repr(pattern) in str(info.value)
    assert reason in str(info.value)


def test_non_string_pattern() -> None:
    with pytest.raises(ConfigurationError):
        parse_pattern(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("/", "must not end with '/'"),
        ("/api/", "must not end with '/'"),
        ("api", "must start with '/'"),
        ("", "must start with '/'"),
        ("/files/{*rest}", "wildcard"),
        ("/a//b", "empty segment"),
        ("/a{b}", "mixes literal text"),
    ],
)
def test_bad_prefixes(prefix: str, reason: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_prefix(prefix)
    assert repr(prefix) in str(info.value)
    assert reason in str(info.value)


def test_prefix_may_have_params() -> None:
    assert parse_prefix("/orgs/{org}").param_names == ("org",)


def test_under_joins_root_to_the_prefix_itself() -> None:
    prefix = parse_prefix("/api")
    assert parse_pattern("/").under(prefix).source == "/api"
    assert parse_pattern("/x").under(prefix).source == "/api/x"
    assert parse_pattern("/x/").under(prefix).source == "/api/x/"
    joined = parse_pattern("/repos/{repo}").under(parse_prefix("/orgs/{org}"))
    assert joined.source == "/orgs/{org}/repos/{repo}"
    assert joined.param_names == ("org", "repo")


def test_under_rejects_a_name_repeated_across_prefix() -> None:
    with pytest.raises(ConfigurationError, match="used twice"):
        parse_pattern("/items/{id}").under(parse_prefix("/orgs/{id}"))
