"""``Form[T]`` over ``multipart/form-data``: the same ``T`` as from a urlencoded body, the
``MultipartConfig`` limits at N-1/N/N+1, file parts (skipped, or 422 when named like a field
of ``T``), the body streamed when nothing else reads it, and 415 for other content types."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import attrs
import pytest

from trioframe import (
    ConfigurationError,
    Form,
    Multipart,
    MultipartConfig,
    Next,
    Request,
    Response,
    Router,
)
from trioframe.testing import TestClient

from ._support import CONTENT_TYPE, Part, assert_error, encode

MULTIPART = {"content-type": CONTENT_TYPE}
URLENCODED = {"content-type": "application/x-www-form-urlencoded"}


@attrs.frozen
class Signup:
    email: str
    age: int
    tags: list[str] = attrs.Factory(list)
    newsletter: bool = False
    nickname: str | None = None


async def signup(form: Form[Signup]) -> Response:
    return Response.json(form)


async def test_multipart_and_urlencoded_give_the_same_value() -> None:
    body = encode(
        [
            Part("email", "ädä@example.org".encode()),
            Part("age", b"36"),
            Part("tags", b"a"),
            Part("tags", b"b"),
            Part("newsletter", b"on"),
            Part("unknown", b"ignored"),
        ]
    )
    query = "email=%C3%A4d%C3%A4%40example.org&age=36&tags=a&tags=b&newsletter=on&unknown=x"
    async with TestClient(Router().post("/", signup)) as client:
        multipart = await client.post("/", content=body, headers=MULTIPART)
        urlencoded = await client.post("/", content=query.encode(), headers=URLENCODED)
        # httpx's own multipart encoding (what a browser form sends looks alike)
        by_httpx = await client.post(
            "/",
            data={"email": "ädä@example.org", "age": "36", "tags": ["a", "b"], "newsletter": "on"},
            files={"unused": ("a.txt", b"file content", "text/plain")},
        )
    expected = {
        "email": "ädä@example.org",
        "age": 36,
        "tags": ["a", "b"],
        "newsletter": True,
        "nickname": None,
    }
    assert multipart.status_code == 200 and multipart.json() == expected
    assert urlencoded.json() == expected
    assert by_httpx.json() == expected


@dataclasses.dataclass
class Note:
    text: str
    pinned: bool = False


@attrs.frozen
class Email:
    email: str


async def test_a_dict_and_a_dataclass_as_well() -> None:
    async def as_dict(form: Form[dict[str, str]]) -> Response:
        return Response.json(form)

    async def as_dataclass(form: Form[Note]) -> Response:
        return Response.json(form)

    body = encode([Part("text", b"hi"), Part("file", b"x", filename="f.bin")])
    router = Router().post("/dict", as_dict).post("/dc", as_dataclass)
    async with TestClient(router) as client:
        assert (await client.post("/dict", content=body, headers=MULTIPART)).json() == {
            "text": "hi"
        }
        got = await client.post("/dc", content=body, headers=MULTIPART)
        assert got.json() == {"text": "hi", "pinned": False}


async def test_a_field_that_does_not_fit_is_a_422_as_for_urlencoded() -> None:
    body = encode([Part("email", b"a@b"), Part("age", b"old")])
    async with TestClient(Router().post("/", signup)) as client:
        response = await client.post("/", content=body, headers=MULTIPART)
        missing = await client.post("/", content=encode([Part("age", b"1")]), headers=MULTIPART)
    assert response.status_code == 422
    assert response.json()["errors"] == ["body.age: expected an integer"]
    assert missing.json()["errors"] == ["body.email: required"]


async def test_a_part_charset_is_honoured_and_bad_text_is_a_400() -> None:
    latin = Part("email", "é@x".encode("latin-1"), content_type="text/plain; charset=latin-1")
    bad = Part("email", b"\xff@x")
    odd = Part("email", b"x", content_type="text/plain; charset=punycode")
    async with TestClient(Router().post("/", signup)) as client:
        ok = await client.post("/", content=encode([latin, Part("age", b"1")]), headers=MULTIPART)
        refused = await client.post("/", content=encode([bad]), headers=MULTIPART)
        unknown = await client.post("/", content=encode([odd]), headers=MULTIPART)
    assert ok.json()["email"] == "é@x"
    assert_error(refused, 400, "'email' is not valid utf-8 text")
    assert_error(unknown, 400, "charset 'punycode' is not supported")


# -- file parts --------------------------------------------------------------------------------
async def test_file_parts_are_skipped_unless_named_like_a_field() -> None:
    skipped = encode(
        [
            Part("avatar", b"\x89PNG" * 100, filename="me.png", content_type="image/png"),
            Part("email", b"a@b"),
            Part("age", b"5"),
        ]
    )
    clash = encode(
        [
            Part("email", b"a@b"),
            Part("nickname", b"not text", filename="nick.txt", content_type="text/plain"),
            Part("age", b"5"),
        ]
    )
    async with TestClient(Router().post("/", signup)) as client:
        ok = await client.post("/", content=skipped, headers=MULTIPART)
        refused = await client.post("/", content=clash, headers=MULTIPART)
    assert ok.json()["email"] == "a@b"
    assert refused.status_code == 422
    assert refused.json()["errors"] == [
        "body.nickname: expected a text field, got a file (Multipart reads files)"
    ]


async def test_a_skipped_file_still_counts_against_max_file_size() -> None:
    def body(size: int) -> bytes:
        return encode(
            [Part("f", b"a" * size, filename="f.bin"), Part("email", b"a@b"), Part("age", b"1")]
        )

    router = Router().multipart_config(MultipartConfig(max_file_size=100)).post("/", signup)
    async with TestClient(router) as client:
        assert (await client.post("/", content=body(100), headers=MULTIPART)).status_code == 200
        over = await client.post("/", content=body(101), headers=MULTIPART)
    assert_error(over, 413, "max_file_size (100)")


# -- limits at N-1, N, N+1 -------------------------------------------------------------------------
async def as_dict(form: Form[dict[str, str]]) -> Response:
    return Response.json(len(form))


@pytest.mark.parametrize(("count", "status"), [(2, 200), (3, 200), (4, 413)])
async def test_max_fields(count: int, status: int) -> None:
    router = Router().multipart_config(MultipartConfig(max_fields=3)).post("/", as_dict)
    body = encode([Part(f"f{i}", b"x") for i in range(count)])
    async with TestClient(router) as client:
        response = await client.post("/", content=body, headers=MULTIPART)
    assert response.status_code == status
    if status == 200:
        assert response.json() == count
    else:
        assert_error(response, 413, "max_fields (3)")


@pytest.mark.parametrize(("size", "status"), [(63, 200), (64, 200), (65, 413)])
async def test_max_field_size(size: int, status: int) -> None:
    async def echo(form: Form[dict[str, str]]) -> Response:
        return Response.json(len(form["text"]))

    router = Router().multipart_config(MultipartConfig(max_field_size=64)).post("/", echo)
    async with TestClient(router) as client:
        body = encode([Part("text", b"a" * size)])
        response = await client.post("/", content=body, headers=MULTIPART)
    assert response.status_code == status
    if status == 200:
        assert response.json() == size
    else:
        assert_error(response, 413, "max_field_size (64)")


async def test_max_total_size_bounds_the_whole_body() -> None:
    body = encode([Part("text", b"a" * 500)])
    router = Router().multipart_config(MultipartConfig(max_total_size=len(body) - 1))
    async with TestClient(router.post("/", as_dict)) as client:
        response = await client.post("/", content=body, headers=MULTIPART)
    assert_error(response, 413, f"max_total_size ({len(body) - 1})")


# -- streamed unless another reader needs the body -------------------------------------------------
async def test_the_body_is_streamed_when_form_is_its_only_reader() -> None:
    kept: list[int] = []

    async def body_kept(request: Request, next: Next) -> Response:
        response = await next(request)
        kept.append(len(request.body))
        return response

    async def with_request(form: Form[dict[str, str]], request: Request) -> Response:
        return Response.json([form["text"], len(request.body)])

    async def chunks(body: bytes) -> AsyncIterator[bytes]:
        for start in range(0, len(body), 7):
            yield body[start : start + 7]

    body = encode([Part("text", b"streamed"), Part("big", b"x" * 5000, filename="big.bin")])
    router = Router().middleware(body_kept).post("/alone", as_dict).post("/both", with_request)
    async with TestClient(router) as client:
        alone = await client.post("/alone", content=chunks(body), headers=MULTIPART)
        both = await client.post("/both", content=body, headers=MULTIPART)
    assert alone.json() == 1 and both.json() == ["streamed", len(body)]
    assert kept == [0, len(body)]  # alone: decoded as it arrived, nothing kept


async def test_two_forms_in_one_handler_read_the_buffered_body() -> None:
    async def twice(a: Form[Email], b: Form[dict[str, str]]) -> Response:
        return Response.json([a.email, b])

    body = encode([Part("email", b"a@b")])
    async with TestClient(Router().post("/", twice)) as client:
        response = await client.post("/", content=body, headers=MULTIPART)
    assert response.json() == ["a@b", {"email": "a@b"}]


async def test_form_beside_multipart_is_refused_at_startup() -> None:
    async def both(form: Form[dict[str, str]], parts: Multipart) -> Response:
        return Response.text("x")

    with pytest.raises(ConfigurationError, match=r"both.*'form' \(Form\).*'parts' \(Multipart\)"):
        async with TestClient(Router().post("/", both)):
            pytest.fail("the client must not start")


# -- content types -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [{"content-type": "text/plain"}, {"content-type": "multipart/mixed; boundary=x"}, {}],
)
async def test_other_content_types_are_still_415(headers: dict[str, str]) -> None:
    async with TestClient(Router().post("/", signup)) as client:
        response = await client.post("/", content=b"email=a", headers=headers)
    assert_error(response, 415, "application/x-www-form-urlencoded or multipart/form-data")


@pytest.mark.parametrize(
    ("content_type", "body", "fragment"),
    [
        ("multipart/form-data", b"", "without a boundary"),
        (CONTENT_TYPE, encode([Part("email", b"a")], close=False), "closing boundary"),
        (CONTENT_TYPE, b"not multipart at all", "malformed multipart body"),
    ],
)
async def test_a_malformed_multipart_form_is_a_400(
    content_type: str, body: bytes, fragment: str
) -> None:
    async with TestClient(Router().post("/", signup)) as client:
        response = await client.post("/", content=body, headers={"content-type": content_type})
    assert_error(response, 400, fragment)
