"""Part headers the decoder refuses with 400 and the standard error body (never a 500):
ambiguous or malformed Content-Disposition and Content-Type parameters, repeated headers,
control characters, header blocks that are not UTF-8, odd header names. Each refused body
sits next to a close one that is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe import Multipart, Response, Router
from trioframe.testing import TestClient

from ._support import BOUNDARY, CONTENT_TYPE, Part, assert_error, encode


def _router() -> Router:
    async def upload(form: Multipart) -> Response:
        out = []
        async for field in form:
            out.append([field.name, field.file_name, field.content_type])
            await field.bytes()
        return Response.json(out)

    return Router().post("/u", upload)


async def _post(body: bytes) -> Any:
    async with TestClient(_router()) as client:
        return await client.post("/u", content=body, headers={"content-type": CONTENT_TYPE})


def _raw_part(head: bytes) -> bytes:
    """A form of one part whose header block is ``head`` (lines without the final CRLF)."""
    dash = b"--" + BOUNDARY.encode()
    return dash + b"\r\n" + head + b"\r\n\r\nvalue\r\n" + dash + b"--\r\n"


@pytest.mark.parametrize(
    ("disposition", "fragment"),
    [
        ('form-data; name="a"; name="b"', "'name' appears more than once"),
        ('form-data; name="a"; filename="x"; filename="y"', "'filename' appears more than once"),
        ("form-data; name*=x; name*0=y", "charset'language'percent-encoded"),
        ("form-data; name*=UTF-8''x; name*0=y", "continuations are not supported"),
        ('form-data; name*0="a"; name*1="b"', "continuations are not supported"),
        ("form-data; name=a; filename*0*=UTF-8''x", "continuations are not supported"),
        ("form-data; name=a; filename*=KOI8-R''%E1", "is not UTF-8 or ISO-8859-1"),
        ("form-data; name=a; filename*=UTF-8''%C3", "is not valid UTF-8"),
        ("form-data; name=a; filename*=UTF-8''%00.txt", "control character"),
        ('form-data; name="unterminated', "'name' has no valid value"),
        ('form-data name="a"', "is not a token or type/subtype"),
        ("form-data; name=a; " + "; ".join(f"p{i}=v" for i in range(40)), "more than 32"),
    ],
)
async def test_malformed_content_disposition_is_400(disposition: str, fragment: str) -> None:
    response = await _post(encode([Part("x", b"v", disposition=disposition)]))
    assert_error(response, 400, "multipart part header Content-Disposition", fragment)


@pytest.mark.parametrize(
    ("content_type", "fragment"),
    [
        ("text/plain; charset*=x; charset*0=y", "charset'language'percent-encoded"),
        ("text/plain; charset=utf-8; charset=latin-1", "'charset' appears more than once"),
        ('text/plain; charset="utf-8', "'charset' has no valid value"),
        ("text plain", "is not a token or type/subtype"),
    ],
)
async def test_malformed_part_content_type_is_400(content_type: str, fragment: str) -> None:
    response = await _post(encode([Part("x", b"v", filename="f", content_type=content_type)]))
    assert_error(response, 400, "multipart part header Content-Type", fragment)


async def test_an_empty_part_content_type_counts_as_absent() -> None:
    response = await _post(encode([Part("x", b"v", content_type="")]))
    assert response.status_code == 200, response.text
    assert response.json() == [["x", None, None]]


@pytest.mark.parametrize(
    ("head", "fragment"),
    [
        (
            b'Content-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="b"',
            "more than one Content-Disposition header",
        ),
        (
            b'Content-Disposition: form-data; name="a"\r\nContent-Type: text/plain\r\n'
            b"content-type: image/png",
            "more than one Content-Type header",
        ),
        (b'Content-Disposition: form-data; name="caf\xe9"', "Content-Disposition is not valid UTF-8"),
        (b'Content-Disposition: form-data; name="a"\r\nContent-Type: text/\xff', "Content-Type is not valid UTF-8"),
        (b'Content-Disposition: form-data; name="a\x00"', "Content-Disposition contains a control character"),
        (b'Content-Disposition: form-data; name="a\nb"', "Content-Disposition contains a control character"),
        (b'Content-Disposition: form-data; name="a\x1b[31m"', "Content-Disposition contains a control character"),
        (b'Content-Disposition: form-data; name="a\x7f"', "Content-Disposition contains a control character"),
        (b'Content-Disposition: form-data; name="a"\r\nX-Note: a\x00b', "X-Note contains a control character"),
    ],
)  # fmt: skip
async def test_refused_part_header_blocks_are_400(head: bytes, fragment: str) -> None:
    assert_error(await _post(_raw_part(head)), 400, fragment)


@pytest.mark.parametrize(
    "head",
    [
        b'Content-Disposition: form-data; name="a"\r\nX-Note: caf\xe9 \x80\xff',
        b'Content-Disposition: form-data;\tname="a"\r\nX-Tab: \tx\ty\t',
        b'content-disposition:form-data; name="a"',
        b'CONTENT-DISPOSITION:    form-data; name="a"   ',
    ],
)
async def test_accepted_part_header_blocks(head: bytes) -> None:
    """Bytes over 0x7F in a header the decoder does not read are only data (``headers``
    has them); HTAB is allowed; header names are case-insensitive; spaces are optional."""
    response = await _post(_raw_part(head))
    assert response.status_code == 200, response.text
    assert response.json() == [["a", None, None]]


@pytest.mark.parametrize(
    "line",
    [b"X Y: v", b"X\x80: v", b": v", b'"X": v', b"X\x00: v", b"X(: v", b"\tX: v"],
)
async def test_odd_part_header_names_are_400(line: bytes) -> None:
    head = b'Content-Disposition: form-data; name="a"\r\n' + line
    assert_error(await _post(_raw_part(head)), 400, "malformed multipart body")
