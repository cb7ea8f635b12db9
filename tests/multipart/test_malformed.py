"""Bodies and content types the decoder refuses: 415 for a type other than
``multipart/form-data``, 400 for a missing or bad boundary and for broken framing. Each case
sits next to the valid body it was derived from, which is accepted."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from trioframe import Multipart, Response, Router
from trioframe.testing import TestClient

from ._support import BOUNDARY, CONTENT_TYPE, Part, assert_error, content_type, encode


class Calls:
    def __init__(self) -> None:
        self.entered = 0
        self.fields: list[str] = []


def _router(calls: Calls) -> Router:
    async def upload(form: Multipart) -> Response:
        calls.entered += 1
        async for field in form:
            calls.fields.append(field.name)
            await field.bytes()
        return Response.json(calls.fields)

    return Router().post("/u", upload)


async def _post(body: bytes, headers: dict[str, str] | None = None) -> tuple[Any, Calls]:
    calls = Calls()
    async with TestClient(_router(calls)) as client:
        response = await client.post(
            "/u",
            content=body,
            headers={"content-type": CONTENT_TYPE} if headers is None else headers,
        )
    return response, calls


VALID = encode([Part("a", b"alpha"), Part("f", b"file data", filename="f.txt")])


async def test_the_valid_body_is_accepted() -> None:
    response, calls = await _post(VALID)
    assert response.status_code == 200, response.text
    assert response.json() == ["a", "f"]
    assert calls.entered == 1


# -- content type: 415 ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [
        "text/plain",
        "application/json",
        "application/x-www-form-urlencoded",
        f"multipart/mixed; boundary={BOUNDARY}",
        f"text/plain; boundary={BOUNDARY}",
        f"multipart/form-data boundary={BOUNDARY}",
        f"multipart/form-data-x; boundary={BOUNDARY}",
        f"text/plain; boundary*0={BOUNDARY}; boundary*=x",
        "",
        None,
    ],
)
async def test_other_content_types_are_415_before_the_handler(value: str | None) -> None:
    headers = {} if value is None else {"content-type": value}
    response, calls = await _post(VALID, headers)
    assert_error(response, 415, "multipart/form-data")
    assert calls.entered == 0


async def test_content_type_is_matched_case_insensitively() -> None:
    response, _ = await _post(VALID, {"content-type": f"Multipart/Form-Data; Boundary={BOUNDARY}"})
    assert response.status_code == 200, response.text


# -- boundary: 400 --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [
        "multipart/form-data",
        "multipart/form-data;",
        "multipart/form-data; charset=utf-8",
        "multipart/form-data; boundary=",
        'multipart/form-data; boundary=""',
    ],
)
async def test_missing_or_empty_boundary_is_400(value: str) -> None:
    response, calls = await _post(VALID, {"content-type": value})
    assert_error(response, 400, "boundary")
    assert calls.entered == 0


async def test_boundary_of_70_characters_is_accepted() -> None:
    boundary = "b" * 69 + "Z"
    body = encode([Part("a", b"alpha")], boundary)
    response, _ = await _post(body, {"content-type": content_type(boundary)})
    assert response.status_code == 200, response.text
    assert response.json() == ["a"]


async def test_boundary_of_71_characters_is_400() -> None:
    boundary = "b" * 70 + "Z"
    body = encode([Part("a", b"alpha")], boundary)
    response, calls = await _post(body, {"content-type": content_type(boundary)})
    assert_error(response, 400, "boundary", "70")
    assert calls.entered == 0


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        # A byte over 0x7F is not a token character...
        (b"multipart/form-data; boundary=caf\xe9", ["malformed Content-Type", "'boundary'"]),
        # ... and a quoted-string may carry it, but a boundary must be ASCII.
        (b'multipart/form-data; boundary="caf\xe9"', ["boundary", "ASCII"]),
    ],
)
async def test_non_ascii_boundary_is_400(value: bytes, fragments: list[str]) -> None:
    calls = Calls()
    async with TestClient(_router(calls)) as client:
        response = await client.post("/u", content=VALID, headers={b"content-type": value})
    assert_error(response, 400, *fragments)
    assert calls.entered == 0


async def test_quoted_boundary_with_rfc_characters_is_accepted() -> None:
    boundary = "a'()+_,-./:=? Z"
    body = encode([Part("a", b"alpha")], boundary)
    response, _ = await _post(body, {"content-type": f'multipart/form-data; boundary="{boundary}"'})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("multipart/form-data; boundary*=x; boundary*0=y", "charset'language'percent-encoded"),
        ("multipart/form-data; boundary*=UTF-8''x; boundary*0=y", "continuations are not supported"),
        ("multipart/form-data; boundary*0=test-; boundary*1=boundary", "continuations are not supported"),
        (f"multipart/form-data; boundary={BOUNDARY}; boundary=other", "'boundary' appears more than once"),
        (f"multipart/form-data; boundary={BOUNDARY}; BOUNDARY={BOUNDARY}", "'boundary' appears more than once"),
        (f'multipart/form-data; boundary="{BOUNDARY}', "'boundary' has no valid value"),
        (f"multipart/form-data; boundary={BOUNDARY} x", "expected ';' after parameter 'boundary'"),
        (f"multipart/form-data; boundary = {BOUNDARY}", "'boundary' has no '='"),
        (f"multipart/form-data; charset=utf-8; charset=latin-1; boundary={BOUNDARY}", "'charset' appears more than once"),
        (f"multipart/form-data; boundary={BOUNDARY}; =x", "expected a parameter name"),
    ],
)  # fmt: skip
async def test_malformed_content_type_parameters_are_400(value: str, fragment: str) -> None:
    response, calls = await _post(VALID, {"content-type": value})
    assert_error(response, 400, "malformed Content-Type", fragment)
    assert calls.entered == 0


@pytest.mark.parametrize(
    "value",
    [
        f"multipart/form-data; boundary*=UTF-8''{BOUNDARY}",
        f"multipart/form-data;boundary={BOUNDARY};",
        f'multipart/form-data ; charset=utf-8 ;; boundary="{BOUNDARY}"',
    ],
)
async def test_well_formed_content_type_variants_are_accepted(value: str) -> None:
    response, _ = await _post(VALID, {"content-type": value})
    assert response.status_code == 200, response.text
    assert response.json() == ["a", "f"]


async def test_a_repeated_content_type_header_is_400() -> None:
    calls = Calls()
    async with TestClient(_router(calls)) as client:
        response = await client.post(
            "/u",
            content=VALID,
            headers=[("content-type", CONTENT_TYPE), ("content-type", content_type("other"))],
        )
    assert_error(response, 400, "more than one Content-Type header")
    assert calls.entered == 0


async def test_body_with_another_boundary_is_400() -> None:
    body = encode([Part("a", b"alpha")], "some-other-boundary")
    response, calls = await _post(body)
    assert_error(response, 400, "malformed multipart body")
    assert calls.fields == []


# -- framing: 400 ---------------------------------------------------------------------------
DASH = b"--" + BOUNDARY.encode()
PART_A = b'Content-Disposition: form-data; name="a"\r\n\r\nalpha\r\n'
PART_B = b'Content-Disposition: form-data; name="b"\r\n\r\nbeta\r\n'
CLOSE = DASH + b"--\r\n"

FRAMING = {
    "empty body": (b"", "closing boundary"),
    "no closing boundary": (encode([Part("a", b"alpha"), Part("b", b"beta")], close=False), "closing boundary"),
    "cut inside a part": (encode([Part("a", b"alpha" * 100)])[:80], "closing boundary"),
    "cut inside the part headers": (DASH + b'\r\nContent-Disposition: form-da', "closing boundary"),
    "only the first boundary line": (DASH + b"\r\n", "closing boundary"),
    "garbage before the first boundary": (b"garbage" + VALID, "malformed"),
    "garbage instead of a boundary": (b"this is not multipart at all", "malformed"),
    "garbage after a delimiter": (DASH + b"\r\n" + PART_A + DASH + b" junk\r\n" + PART_B + CLOSE, "malformed"),
    "garbage instead of part headers": (DASH + b"\r\n" + PART_A + DASH + b"\r\nnot a header line\r\n\r\nbeta\r\n" + CLOSE, "malformed"),
    "header line without a colon": (DASH + b"\r\nContent-Disposition form-data\r\n\r\nx\r\n" + CLOSE, "malformed"),
    "delimiter without CRLF": (DASH + b"X" + PART_A + CLOSE, "malformed"),
    "bare LF line ends": (VALID.replace(b"\r\n", b"\n"), None),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FRAMING))
async def test_broken_framing_is_400(case: str) -> None:
    body, fragment = FRAMING[case]
    response, _ = await _post(body)
    assert_error(response, 400, *([fragment] if fragment else []))


@pytest.mark.parametrize(
    ("part", "fragment"),
    [
        (Part("x", b"v", no_disposition=True), "Content-Disposition"),
        (Part("x", b"v", no_disposition=True, content_type="text/plain"), "Content-Disposition"),
        (Part("x", b"v", disposition='attachment; name="x"'), "Content-Disposition"),
        (Part("x", b"v", disposition='inline; name="x"'), "Content-Disposition"),
        (Part("x", b"v", disposition='formdata; name="x"'), "Content-Disposition"),
        (Part(None, b"v"), "field name"),
        (Part(None, b"v", filename="f.txt"), "field name"),
        (Part("x", b"v", disposition='form-data; filename="f.txt"'), "field name"),
    ],
)
async def test_part_without_form_data_disposition_or_name_is_400(part: Part, fragment: str) -> None:
    body = encode([Part("first", b"ok"), part, Part("last", b"ok")])
    response, calls = await _post(body)
    assert_error(response, 400, fragment)
    # The decoder works a chunk at a time: here the whole body is one chunk, so the error
    # surfaces at the first next_field(), before "first" is handed out.
    assert calls.entered == 1
    assert calls.fields in ([], ["first"])


async def _post_in_pieces(body: bytes, size: int) -> Any:
    async def pieces() -> Any:
        for start in range(0, len(body), size):
            yield body[start : start + size]

    calls = Calls()
    async with TestClient(_router(calls)) as client:
        return await client.post("/u", content=pieces(), headers={"content-type": CONTENT_TYPE})


@pytest.mark.parametrize("piece", [None, 1, 3])
@pytest.mark.parametrize("prefix", [b"\r\x00", b"\r\ngarbage", b"\n \r\n", b"\r\n\r\n\x00\r\n"])
async def test_bytes_between_leading_blank_lines_and_the_first_delimiter_are_400(
    prefix: bytes, piece: int | None
) -> None:
    """python-multipart skips from a leading CR/LF to the next '-' of the same chunk, so the
    garbage was accepted when the body came in one piece and refused when cut after the CR."""
    body = prefix + VALID
    response = (await _post(body))[0] if piece is None else await _post_in_pieces(body, piece)
    assert_error(response, 400, "malformed multipart body")


@pytest.mark.parametrize("piece", [None, 1, 3])
@pytest.mark.parametrize("prefix", [b"\r\n", b"\n", b"\r\n\r\n"])
async def test_leading_blank_lines_are_accepted(prefix: bytes, piece: int | None) -> None:
    body = prefix + VALID
    response = (await _post(body))[0] if piece is None else await _post_in_pieces(body, piece)
    assert response.status_code == 200, response.text
    assert response.json() == ["a", "f"]


async def test_epilogue_after_the_closing_boundary_is_ignored() -> None:
    response, _ = await _post(VALID + b"epilogue text the client may add\r\n")
    assert response.status_code == 200, response.text
    assert response.json() == ["a", "f"]


async def test_an_empty_name_is_a_name() -> None:
    response, _ = await _post(encode([Part("", b"v")]))
    assert response.status_code == 200, response.text
    assert response.json() == [""]


# -- logging ----------------------------------------------------------------------------------
#: Framing python-multipart itself refuses (the other malformed cases never reach it).
PARSER_REFUSES = [
    "garbage after a delimiter",
    "garbage instead of part headers",
    "header line without a colon",
    "delimiter without CRLF",
]


async def test_malformed_bodies_write_no_warnings_only_one_debug_line_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Any client can send malformed bodies, as many as it likes: each is a 400 and one DEBUG
    record on ``trioframe.multipart``, never a WARNING in the server's log."""
    caplog.set_level(logging.DEBUG)
    rounds = 20
    async with TestClient(_router(Calls())) as client:
        for _ in range(rounds):
            for case in PARSER_REFUSES:
                body = FRAMING[case][0]
                response = await client.post(
                    "/u", content=body, headers={"content-type": CONTENT_TYPE}
                )
                assert_error(response, 400, "malformed multipart body")
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == []
    debug = [r for r in caplog.records if r.name == "trioframe.multipart"]
    assert len(debug) == rounds * len(PARSER_REFUSES)
    assert all(r.levelno == logging.DEBUG for r in debug)
