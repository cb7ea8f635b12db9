"""``Field.text()`` and the charset a part names: the known text encodings (under any of
their aliases) decode; any other name (a quadratic codec like ``punycode``, a bytes-to-bytes
codec like ``zlib``, an unknown name) is 400 naming it, before the content is read; content
that does not decode is 400. Never a 500, never a stalled event loop."""

from __future__ import annotations

import encodings
import time
from typing import Any

import pytest

from trioframe import Multipart, Response, Router
from trioframe._multipart.charsets import TEXT_CODECS, text_codec
from trioframe.testing import TestClient

from ._support import CONTENT_TYPE, Part, assert_error, encode


def _router(reads: list[str]) -> Router:
    async def upload(form: Multipart) -> Response:
        texts = []
        async for field in form:
            reads.append(field.name)
            texts.append(await field.text())
        return Response.json(texts)

    return Router().post("/u", upload)


async def _post(parts: list[Part]) -> tuple[Any, list[str]]:
    reads: list[str] = []
    async with TestClient(_router(reads)) as client:
        response = await client.post(
            "/u", content=encode(parts), headers={"content-type": CONTENT_TYPE}
        )
    return response, reads


@pytest.mark.parametrize(
    ("charset", "content", "text"),
    [
        ("utf-8", "Grüße 写真 🙂".encode(), "Grüße 写真 🙂"),
        ("UTF8", "é".encode(), "é"),
        ('"utf_8"', "é".encode(), "é"),
        ("US-ASCII", b"plain", "plain"),
        ("ISO-8859-1", b"caf\xe9", "café"),
        ("latin1", b"caf\xe9", "café"),
        ("l1", b"caf\xe9", "café"),
        ("iso-8859-15", b"\xa4 5", "€ 5"),
        ("Latin9", b"\xa4 5", "€ 5"),
        ("windows-1252", b"\x80 5", "€ 5"),
        ("cp1251", "Отчёт".encode("cp1251"), "Отчёт"),
        ("KOI8-R", "Отчёт".encode("koi8_r"), "Отчёт"),
        ("utf-16", "写真".encode("utf-16"), "写真"),
        ("UTF-16LE", "写真".encode("utf-16-le"), "写真"),
        ("Shift_JIS", "写真".encode("shift_jis"), "写真"),
        ("gb18030", "写真".encode("gb18030"), "写真"),
        ("EUC-KR", "사진".encode("euc_kr"), "사진"),
    ],
)
async def test_known_charsets_decode(charset: str, content: bytes, text: str) -> None:
    part = Part("t", content, content_type=f"text/plain; charset={charset}")
    response, _ = await _post([part])
    assert response.status_code == 200, response.text
    assert response.json() == [text]


@pytest.mark.parametrize(
    "charset",
    [
        "punycode", "idna", "rot13", "rot_13", "base64", "base_64", "zlib", "zip", "bz2",
        "hex", "uu", "quopri", "unicode_escape", "raw_unicode_escape", "utf-7", "utf_8_sig",
        "cp037", "mbcs", "undefined", "no-such-charset", "utf-8.", "",
    ],
)  # fmt: skip
async def test_other_charsets_are_400_naming_them(charset: str) -> None:
    part = Part("t", b"YWJj", content_type=f'text/plain; charset="{charset}"')
    response, reads = await _post([part])
    assert_error(response, 400, "field 't'", f"charset {charset!r} is not supported")
    assert reads == ["t"]


async def test_a_long_charset_name_is_cut_in_the_message() -> None:
    part = Part("t", b"x", content_type="text/plain; charset=" + "x" * 5000)
    response, _ = await _post([part])
    body = assert_error(response, 400, "is not supported")
    assert len(body["message"]) < 100


async def test_punycode_is_refused_before_the_content_is_decoded() -> None:
    """Python's punycode decoder is quadratic: this 40 KB value takes it about 1.7 s (the
    event loop stalled all that time), and then it raises a ``UnicodeError`` that used to be
    a 500. The charset is refused up front instead: the whole exchange (client and server
    run in this thread) takes a few milliseconds of CPU."""
    part = Part("t", b"-" + b"9" * 40_000, content_type="text/plain; charset=punycode")
    start = time.thread_time()
    response, _ = await _post([part])
    elapsed = time.thread_time() - start
    assert_error(response, 400, "charset 'punycode' is not supported")
    assert elapsed < 0.5, f"{elapsed:.2f} s of CPU"


@pytest.mark.parametrize(
    ("charset", "content"),
    [
        ("utf-8", b"\xff\xfe"),
        ("us-ascii", b"caf\xe9"),
        ("utf-16", b"\xff\xfe\x41"),  # odd length
        ("shift_jis", b"\x81"),  # cut inside a two-byte sequence
        ("windows-1252", b"\x81"),  # undefined in this code page
    ],
)
async def test_content_that_does_not_decode_is_400(charset: str, content: bytes) -> None:
    part = Part("t", content, content_type=f"text/plain; charset={charset}")
    response, _ = await _post([part])
    assert_error(response, 400, "field 't' is not valid", charset)


async def test_unknown_charset_names_leave_no_trace_in_the_codec_registry() -> None:
    """``encodings`` remembers every name it failed to find, for good: decoding with the
    client's name as it is let each request grow that cache."""
    before = len(encodings._cache)
    parts = [Part(f"f{i}", b"x", content_type=f"text/plain; charset=nope-{i}") for i in range(20)]
    for part in parts:
        response, _ = await _post([part])
        assert response.status_code == 400
    assert len(encodings._cache) == before


def test_every_accepted_codec_exists_and_decodes_text() -> None:
    for codec in TEXT_CODECS:
        assert text_codec(codec) == codec
        assert "text".encode(codec).decode(codec) == "text"
