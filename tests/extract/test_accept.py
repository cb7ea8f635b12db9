"""``Accept``: choosing among the server's media types by the client's Accept header
(RFC 9110 section 12.5.1), as a table, as properties, and as an extractor."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz._settings import fuzz_settings
from trioframe import Accept, Error, Response, Router
from trioframe._http.accept import MAX_RANGES, parse_accept
from trioframe.testing import TestClient

JSON, HTML, TEXT = "application/json", "text/html", "text/plain"

# (Accept header or None, offers, expected best)
TABLE: list[tuple[str | None, list[str], str | None]] = [
    (None, [JSON, HTML], JSON),  # no header: anything, the first offer
    (None, [], None),
    ("text/html", [JSON, HTML], HTML),
    ("application/json, text/html", [HTML, JSON], HTML),  # equal q: the server's order
    ("text/html;q=0.5, application/json", [HTML, JSON], JSON),
    ("*/*;q=0.1, text/html", [JSON, HTML], HTML),
    ("*/*", [JSON, HTML], JSON),
    ("text/*", [JSON, HTML, TEXT], HTML),
    ("text/*;q=0.3, text/plain", [HTML, TEXT], TEXT),
    ("application/xml", [JSON, HTML], None),  # nothing acceptable
    ("text/html;q=0", [HTML], None),  # q=0: not acceptable
    ("*/*, text/html;q=0", [HTML, JSON], JSON),  # the specific q=0 wins over */*
    ("text/*;q=0, text/html", [HTML, TEXT], HTML),
    (
        "text/html;level=1, text/html;q=0.2, */*;q=0.1",
        ["text/html;level=1", HTML],
        ("text/html;level=1"),
    ),
    ("text/html;level=1;q=0.1, text/html;q=0.9", ["text/html;level=1", HTML], HTML),
    ("text/html;level=1;q=0.1, text/html;q=0.9", ["text/html;level=2"], "text/html;level=2"),
    ("TEXT/HTML;Q=0.5, application/json;q=0.4", [JSON, HTML], HTML),  # case-insensitive
    ("text/html;charset=UTF-8", ["text/html;charset=utf-8"], "text/html;charset=utf-8"),
    (
        'text/html;foo="a,b";q=0.9, application/json;q=0.1',
        [JSON, 'text/html;foo="a,b"'],
        ('text/html;foo="a,b"'),
    ),
    ("application/json;q=1.000, text/html;q=0.999", [HTML, JSON], JSON),
    # malformed entries are skipped, the rest still counts
    ("garbage, text/html", [JSON, HTML], HTML),
    ("text/html;q=2, application/json", [HTML, JSON], JSON),  # q over 1: not a qvalue
    ("text/html;q=0.1234, application/json;q=0.5", [HTML, JSON], JSON),  # four decimals
    ("*/html, application/json", [HTML, JSON], JSON),  # */subtype is no range
    ("text/html;level, application/json", [HTML, JSON], JSON),  # a parameter without =
    (",,, ;;, text/html", [JSON, HTML], HTML),
    # a header with no readable entry counts as absent
    ("", [JSON, HTML], JSON),
    ("nonsense", [JSON, HTML], JSON),
    # what follows the weight (accept-ext) is ignored
    ("text/html;q=0.5;ext=1, application/json;q=0.4", [JSON, HTML], HTML),
]


@pytest.mark.parametrize(("header", "offers", "expected"), TABLE)
def test_best(header: str | None, offers: list[str], expected: str | None) -> None:
    assert Accept(header).best(offers) == expected


def test_quality_and_accepts() -> None:
    accept = Accept("text/html;q=0.5, text/*;q=0.2, */*;q=0")
    assert accept.quality(HTML) == 0.5
    assert accept.quality(TEXT) == 0.2
    assert accept.quality(JSON) == 0.0
    assert not accept.accepts(JSON)
    assert Accept(None).quality(JSON) == 1.0


@pytest.mark.parametrize("offer", ["html", "text/*", "*/*", "text/html;level", ""])
def test_an_offer_must_be_a_media_type(offer: str) -> None:
    with pytest.raises(ValueError, match="not a media type"):
        Accept("*/*").best([offer])


def test_ranges_are_bounded() -> None:
    header = ", ".join(f"type{i}/sub" for i in range(10 * MAX_RANGES))
    assert len(parse_accept(header)) == MAX_RANGES


_PIECES = st.sampled_from(
    [",", ";", "=", '"', "\\", " ", "\t", "/", "*", "q", "q=", "0", "1", ".", "text", "html",
     "application/json", "level=1", "\x00", "é", "q=0.5", "*/*", "text/*"]
)  # fmt: skip


@fuzz_settings(300)
@given(header=st.lists(_PIECES, max_size=60).map("".join), offers=st.lists(
    st.sampled_from([JSON, HTML, TEXT, "text/html;level=1", "image/png"]), max_size=4
))  # fmt: skip
def test_any_header_is_read_without_an_exception(header: str, offers: list[str]) -> None:
    accept = Accept(header)
    best = accept.best(offers)
    assert best is None or best in offers
    for offer in offers:
        assert 0.0 <= accept.quality(offer) <= 1.0
    if offers and best is None:
        assert all(accept.quality(offer) == 0.0 for offer in offers)


@fuzz_settings(100)
@given(header=st.text(max_size=200))
def test_any_text_is_read_without_an_exception(header: str) -> None:
    assert Accept(header).best([JSON, HTML]) in (JSON, HTML, None)


_ADVERSARIAL = [
    '"' + "a\\" * 4,  # an open quoted string with escapes
    "text/html;a=" + '"' * 7,
    ",;" * 5,
    "text/html;q=0.5;" + "p=v;" * 3,
    "*/*;q=0," * 2,
]


def _steps(header: str) -> int:
    """How many lines of Python reading ``header`` executes: a count, unlike a time, that a
    loaded machine does not change."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        Accept(header).best([JSON, HTML])
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("unit", _ADVERSARIAL)
def test_parsing_is_linear_in_the_header_size(unit: str) -> None:
    small, large = _steps(unit * 2_000), _steps(unit * 16_000)  # 8 times longer
    assert large <= 10 * small + 1_000  # linear: 8 times as many; quadratic: about 64


async def test_the_extractor_and_406() -> None:
    async def page(accept: Accept) -> Response:
        chosen = accept.best([JSON, HTML])
        if chosen is None:
            raise Error.not_acceptable(f"this page is {JSON} or {HTML}")
        if chosen == HTML:
            return Response.html("<p>hi</p>")
        return Response.json({"hi": True})

    async with TestClient(Router().get("/", page)) as client:
        assert (await client.get("/")).headers["content-type"].startswith(JSON)
        html = await client.get("/", headers={"accept": "text/html, */*;q=0.1"})
        assert html.headers["content-type"].startswith(HTML)
        refused = await client.get("/", headers={"accept": "image/png"})
        assert refused.json() == {
            "status": 406,
            "error": "Not Acceptable",
            "message": f"this page is {JSON} or {HTML}",
        }
