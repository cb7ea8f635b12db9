"""``examples/upload.py``: the form page, the accepted types, the 10 MiB cap, per-upload
directories under ``UPLOAD_DIR`` (here ``tmp_path``), safe file names, the JSON answer."""

from __future__ import annotations

import json
import pathlib
import runpy
from http import HTTPStatus
from typing import Any

import httpx
import pytest

from trioframe import Router
from trioframe.testing import TestClient

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "upload.py"
MiB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
JPEG = b"\xff\xd8\xff\xe0" + b"\x10" * 3000


@pytest.fixture
def root(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The example's ``UPLOAD_DIR``: a fresh directory per test."""
    monkeypatch.setenv("UPLOAD_DIR", str(tmp_path / "uploads"))
    return tmp_path / "uploads"


@pytest.fixture
def router(root: pathlib.Path) -> Router:
    loaded: Router = runpy.run_path(str(EXAMPLE))["router"]
    return loaded


def tree(directory: pathlib.Path) -> list[str]:
    if not directory.exists():
        return []
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def assert_error(response: httpx.Response, status: int, fragment: str) -> None:
    assert response.status_code == status, response.text
    body = json.loads(response.content)
    assert body["status"] == status
    assert body["error"] == HTTPStatus(status).phrase
    assert fragment in body["message"], body


async def test_the_form_page(router: Router) -> None:
    async with TestClient(router) as client:
        response = await client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert '<form action="/upload" method="post" enctype="multipart/form-data">' in page
    assert '<input type="text" name="title">' in page
    assert 'type="file" name="file"' in page


async def test_upload_saves_files_in_a_fresh_directory(router: Router, root: pathlib.Path) -> None:
    async with TestClient(router) as client:
        response = await client.post(
            "/upload",
            data={"title": "holiday"},
            files=[
                ("file", ("cat.png", PNG, "image/png")),
                ("file", ("dog.jpg", JPEG, "image/jpeg")),
                ("file", ("notes.txt", b"remember the milk\n", "text/plain; charset=utf-8")),
            ],
        )
    assert response.status_code == 200, response.text
    doc: dict[str, Any] = response.json()
    upload_id = doc["id"]
    assert isinstance(upload_id, str) and len(upload_id) == 32
    assert doc["fields"] == [{"name": "title", "size": 7}]
    assert doc["files"] == [
        {"field": "file", "file_name": "cat.png", "content_type": "image/png", "size": len(PNG)},
        {"field": "file", "file_name": "dog.jpg", "content_type": "image/jpeg", "size": len(JPEG)},
        {"field": "file", "file_name": "notes.txt", "content_type": "text/plain", "size": 18},
    ]
    assert tree(root) == [
        upload_id,
        f"{upload_id}/cat.png",
        f"{upload_id}/dog.jpg",
        f"{upload_id}/notes.txt",
    ]
    assert (root / upload_id / "cat.png").read_bytes() == PNG
    assert (root / upload_id / "dog.jpg").read_bytes() == JPEG
    assert (root / upload_id / "notes.txt").read_bytes() == b"remember the milk\n"


async def test_each_upload_gets_its_own_directory(router: Router, root: pathlib.Path) -> None:
    async with TestClient(router) as client:
        ids = []
        for _ in range(2):
            response = await client.post("/upload", files={"file": ("a.txt", b"a", "text/plain")})
            ids.append(response.json()["id"])
    assert ids[0] != ids[1]
    assert tree(root) == sorted([*ids, f"{ids[0]}/a.txt", f"{ids[1]}/a.txt"])


@pytest.mark.parametrize(
    ("client_name", "saved"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        ("/abs/path/notes.txt", "notes.txt"),
        (".hidden", "hidden"),
        ("..", "upload"),
        ("my notes (v2).txt", "my notes _v2_.txt"),
    ],
)
async def test_client_file_names_are_made_safe(
    router: Router, root: pathlib.Path, tmp_path: pathlib.Path, client_name: str, saved: str
) -> None:
    async with TestClient(router) as client:
        response = await client.post(
            "/upload", files={"file": (client_name, b"text", "text/plain")}
        )
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["files"][0]["file_name"] == saved
    assert tree(root) == [doc["id"], f"{doc['id']}/{saved}"]
    assert tree(tmp_path) == ["uploads", *[f"uploads/{p}" for p in tree(root)]]


async def test_same_file_name_twice_in_one_upload(router: Router, root: pathlib.Path) -> None:
    async with TestClient(router) as client:
        response = await client.post(
            "/upload",
            files=[
                ("file", ("a.txt", b"first", "text/plain")),
                ("file", ("../a.txt", b"second", "text/plain")),
            ],
        )
    doc = response.json()
    assert [f["file_name"] for f in doc["files"]] == ["a.txt", "2-a.txt"]
    assert (root / doc["id"] / "a.txt").read_bytes() == b"first"
    assert (root / doc["id"] / "2-a.txt").read_bytes() == b"second"


@pytest.mark.parametrize(
    "content_type", ["application/pdf", "image/gif", "text/html", "application/octet-stream"]
)
async def test_other_file_types_are_400(
    router: Router, root: pathlib.Path, content_type: str
) -> None:
    async with TestClient(router) as client:
        response = await client.post(
            "/upload",
            files=[
                ("file", ("ok.png", PNG, "image/png")),  # saved first, then removed
                ("file", ("bad.bin", b"%PDF-1.7", content_type)),
            ],
        )
    assert_error(response, 400, f"type {content_type!r}")
    assert tree(root) == []


async def test_a_file_part_without_a_type_is_400(router: Router, root: pathlib.Path) -> None:
    body = (
        b"--b\r\n"
        b'Content-Disposition: form-data; name="file"; filename="x.png"\r\n\r\n'
        b"data\r\n--b--\r\n"
    )
    async with TestClient(router) as client:
        response = await client.post(
            "/upload", content=body, headers={"content-type": "multipart/form-data; boundary=b"}
        )
    assert_error(response, 400, "type 'none'")
    assert tree(root) == []


async def test_an_empty_file_input_is_ignored(router: Router, root: pathlib.Path) -> None:
    """What a browser sends when the file input is left empty: ``filename=""``, no data."""
    body = (
        b'--b\r\nContent-Disposition: form-data; name="title"\r\n\r\nno file\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"; filename=""\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n"
    )
    async with TestClient(router) as client:
        response = await client.post(
            "/upload", content=body, headers={"content-type": "multipart/form-data; boundary=b"}
        )
    assert response.status_code == 200, response.text
    assert response.json() == {"id": None, "fields": [{"name": "title", "size": 7}], "files": []}
    assert tree(root) == []


async def test_upload_within_10_mib_is_accepted(router: Router, root: pathlib.Path) -> None:
    content = b"t" * (10 * MiB - 1000)
    async with TestClient(router) as client:
        response = await client.post("/upload", files={"file": ("big.txt", content, "text/plain")})
    assert response.status_code == 200, response.text
    upload_id = response.json()["id"]
    assert (root / upload_id / "big.txt").stat().st_size == len(content)


async def test_upload_over_10_mib_is_413_and_leaves_nothing(
    router: Router, root: pathlib.Path
) -> None:
    async with TestClient(router) as client:
        response = await client.post(
            "/upload", files={"file": ("big.txt", b"t" * (10 * MiB + 1), "text/plain")}
        )
    assert_error(response, 413, "max_total_size")
    assert tree(root) == []


async def test_upload_over_10_mib_streamed_is_413_and_leaves_nothing(
    router: Router, root: pathlib.Path
) -> None:
    """No Content-Length: the cap is found while the file is being written, and the
    partly written upload is removed."""
    head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n'
    head += b"Content-Type: text/plain\r\n\r\n"

    async def body() -> Any:
        yield head
        for _ in range(11):
            yield b"t" * MiB
        yield b"\r\n--b--\r\n"

    async with TestClient(router) as client:
        response = await client.post(
            "/upload", content=body(), headers={"content-type": "multipart/form-data; boundary=b"}
        )
    assert response.status_code == 413, response.text
    assert tree(root) == []


async def test_a_body_that_is_not_multipart_is_415(router: Router, root: pathlib.Path) -> None:
    async with TestClient(router) as client:
        response = await client.post("/upload", json={"file": "x"})
    assert_error(response, 415, "multipart/form-data")
    assert tree(root) == []
