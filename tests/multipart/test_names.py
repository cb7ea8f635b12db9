"""Field names and file names outside Latin-1, as browsers and curl send them (raw UTF-8 in
the quoted value) and as RFC 8187 extended values (``filename*=UTF-8''...``): ``name`` and
``file_name`` are the real Unicode text; ``headers`` keep the bytes as received."""

from __future__ import annotations

from typing import Any

import pytest

from trioframe import Multipart, Response, Router
from trioframe.testing import TestClient

from ._support import CONTENT_TYPE, Part, encode

HEADERS = {"content-type": CONTENT_TYPE}
NAMES = ["写真.jpg", "Отчёт.pdf", "🙂.png", "Grüße.txt", "日本語 ファイル名 (1).tar.gz"]


def _router(seen: list[dict[str, Any]]) -> Router:
    async def upload(form: Multipart) -> Response:
        async for field in form:
            seen.append(
                {
                    "name": field.name,
                    "file_name": field.file_name,
                    "raw": list(field.headers.raw),
                    "disposition": field.headers.get("content-disposition"),
                    "content": await field.bytes(),
                }
            )
        return Response.json([[s["name"], s["file_name"]] for s in seen])

    return Router().post("/u", upload)


async def _post(body: bytes) -> tuple[Any, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    async with TestClient(_router(seen)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    return response, seen


@pytest.mark.parametrize("name", NAMES)
async def test_raw_utf8_file_and_field_names_arrive_intact(name: str) -> None:
    field_name = "名前-" + name.split(".")[0]
    response, seen = await _post(encode([Part(field_name, b"data", filename=name)]))
    assert response.status_code == 200, response.text
    assert response.json() == [[field_name, name]]
    assert seen[0]["content"] == b"data"
    # The headers are the bytes as received; read as ISO-8859-1, like request headers.
    disposition = f'form-data; name="{field_name}"; filename="{name}"'.encode()
    assert seen[0]["raw"] == [(b"content-disposition", disposition)]
    assert seen[0]["disposition"] == disposition.decode("latin-1")


async def test_httpx_built_unicode_names() -> None:
    seen: list[dict[str, Any]] = []
    async with TestClient(_router(seen)) as client:
        response = await client.post(
            "/u",
            data={"заголовок": "x"},
            files=[("写真", (name, b"d", "application/octet-stream")) for name in NAMES],
        )
    assert response.status_code == 200, response.text
    assert response.json() == [["заголовок", None]] + [["写真", name] for name in NAMES]


@pytest.mark.parametrize(
    ("disposition", "name", "file_name"),
    [
        ("form-data; name=f; filename*=UTF-8''%E5%86%99%E7%9C%9F.jpg", "f", "写真.jpg"),
        ("form-data; name=f; filename*=utf-8'ru'%D0%9E%D1%82%D1%87%D1%91%D1%82.pdf", "f", "Отчёт.pdf"),
        ("form-data; name*=UTF-8''%F0%9F%99%82; filename*=UTF-8''%F0%9F%99%82.png", "🙂", "🙂.png"),
        ("form-data; name=f; filename*=ISO-8859-1''Gr%FC%DFe.txt", "f", "Grüße.txt"),
        # Both forms: the extended one wins, whichever comes first.
        ("form-data; name=f; filename=\"photo.jpg\"; filename*=UTF-8''%E5%86%99.jpg", "f", "写.jpg"),
        ("form-data; name=f; filename*=UTF-8''%E5%86%99.jpg; filename=\"photo.jpg\"", "f", "写.jpg"),
        ("form-data; name=\"plain\"; name*=UTF-8''%E5%90%8D; filename=\"a\"", "名", "a"),
    ],
)  # fmt: skip
async def test_rfc_8187_extended_names(disposition: str, name: str, file_name: str) -> None:
    response, _ = await _post(encode([Part(None, b"v", disposition=disposition)]))
    assert response.status_code == 200, response.text
    assert response.json() == [[name, file_name]]


@pytest.mark.parametrize(
    ("quoted", "file_name"),
    [
        # Browsers escape '"', CR and LF as %22, %0D, %0A but not '%' itself, so the
        # sequences are ambiguous: they are kept as sent.
        ("say %22hi%22.txt", "say %22hi%22.txt"),
        ("100%.txt", "100%.txt"),
        # Browsers send a backslash as it is; \" and \\ are read as escapes.
        ("a\\b.txt", "a\\b.txt"),
        ("C:\\Users\\ada\\cv.docx", "C:\\Users\\ada\\cv.docx"),
        ('say \\"hi\\".txt', 'say "hi".txt'),
        ("a\\\\b.txt", "a\\b.txt"),
        ("semi; colon=x.txt", "semi; colon=x.txt"),
    ],
)
async def test_quoted_file_names_as_browsers_and_rfc_9110_send_them(
    quoted: str, file_name: str
) -> None:
    response, _ = await _post(encode([Part("f", b"v", filename=quoted)]))
    assert response.status_code == 200, response.text
    assert response.json() == [["f", file_name]]
