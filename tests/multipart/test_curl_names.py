"""Over a loopback socket with curl as the client: ``curl -F 'file=@写真.jpg'`` sends the
file name as raw UTF-8 in the quoted ``filename``, as browsers do, and it arrives intact."""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil

import pytest
import trio

from tests.loopback._support import serving
from trioframe import Multipart, Response, Router

pytestmark = [
    pytest.mark.loopback,
    pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl"),
]

NAMES = ["写真.jpg", "Отчёт.pdf", "🙂.png"]


async def upload(form: Multipart) -> Response:
    fields = []
    async for field in form:
        content = await field.bytes()
        fields.append(
            {
                "name": field.name,
                "file_name": field.file_name,
                "content_type": field.content_type,
                "sha256": hashlib.sha256(content).hexdigest(),
            }
        )
    return Response.json(fields)


async def test_curl_uploads_keep_unicode_file_and_field_names(tmp_path: pathlib.Path) -> None:
    files = []
    for index, name in enumerate(NAMES):
        path = tmp_path / name
        path.write_bytes(bytes([index]) * 1000 + name.encode())
        files.append(path)
    args = [
        f"ファイル{index}=@{path};type=application/octet-stream" for index, path in enumerate(files)
    ]
    with trio.fail_after(10):
        async with serving(Router().post("/upload", upload)) as served:
            form = [arg for value in [*args, "説明=こんにちは"] for arg in ("-F", value)]
            result = await trio.run_process(
                ["curl", "-sS", "--max-time", "5", *form, served.url + "/upload"],
                capture_stdout=True,
            )
    assert json.loads(result.stdout) == [
        {
            "name": f"ファイル{index}",
            "file_name": path.name,
            "content_type": "application/octet-stream",
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }
        for index, path in enumerate(files)
    ] + [
        {
            "name": "説明",
            "file_name": None,
            "content_type": None,
            "sha256": hashlib.sha256("こんにちは".encode()).hexdigest(),
        }
    ]
