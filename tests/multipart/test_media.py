"""``essence`` and ``MediaType``: the two readings of a Content-Type value that the JSON and
form extractors, the multipart decoder, compression and the event-stream check share."""

from __future__ import annotations

import pytest

from trioframe._http.media import MediaType, essence, essence_bytes
from trioframe._http.params import ParameterError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        (" \ttext/event-stream\t ;x=y", "text/event-stream"),
        ("", ""),
        ("; charset=utf-8", ""),
        ("text/plain\x85", "text/plain\x85"),  # only OWS (SP, HTAB) is trimmed
    ],
)
def test_essence_is_the_lower_case_type_before_the_parameters(value: str, expected: str) -> None:
    assert essence(value) == expected
    assert essence_bytes(value.encode("latin-1")) == expected.encode("latin-1")


def test_a_media_type_reads_its_parameters() -> None:
    media = MediaType.parse('Multipart/Form-Data; Boundary="a b"; charset=UTF-8')
    assert media.essence == "multipart/form-data"
    assert media.params == {"boundary": "a b", "charset": "UTF-8"}
    assert media.charset == "UTF-8"
    assert MediaType.parse("text/plain").charset is None


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("text", "type/subtype"),
        ("text plain", "is not a token or type/subtype"),
        ("text/plain; charset=a; charset=b", "'charset' appears more than once"),
    ],
)
def test_a_malformed_media_type_is_refused(value: str, fragment: str) -> None:
    with pytest.raises(ParameterError, match=fragment):
        MediaType.parse(value)
