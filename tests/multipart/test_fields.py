"""The streaming ``Multipart`` / ``Field`` API through ``TestClient``: ``next_field``,
``async for``, the field attributes, ``text``/``bytes``/``save_to_file``, read-once content,
skipping, and uploads built by httpx (``data=`` / ``files=``)."""

from __future__ import annotations

import pathlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from trioframe import Field, FileField, Multipart, Response, Router
from trioframe.testing import TestClient

from ._support import CONTENT_TYPE, MiB, Part, assert_error, encode, tree

HEADERS = {"content-type": CONTENT_TYPE}


def describe(field: Field) -> dict[str, Any]:
    return {
        "name": field.name,
        "is_file": field.is_file,
        "file_name": field.file_name,
        "content_type": field.content_type,
        "headers": field.headers.items(),
    }


# -- next_field / async for ----------------------------------------------------------------
async def test_next_field_returns_each_field_then_none() -> None:
    seen: list[dict[str, Any]] = []

    async def upload(form: Multipart) -> Response:
        title = await form.next_field()
        assert title is not None
        seen.append({**describe(title), "text": await title.text()})
        doc = await form.next_field()
        assert doc is not None
        seen.append({**describe(doc), "bytes": await doc.bytes()})
        assert await form.next_field() is None
        assert await form.next_field() is None  # stays at the end
        return Response.text("ok")

    body = encode(
        [
            Part("title", "Grüße".encode()),
            Part(
                "doc",
                b"\x00\x01binary\r\n--not-a-boundary",
                filename="report.bin",
                content_type="application/octet-stream",
                extra=(("X-Custom", "yes"),),
            ),
        ]
    )
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert seen == [
        {
            "name": "title",
            "is_file": False,
            "file_name": None,
            "content_type": None,
            "headers": [("content-disposition", 'form-data; name="title"')],
            "text": "Grüße",
        },
        {
            "name": "doc",
            "is_file": True,
            "file_name": "report.bin",
            "content_type": "application/octet-stream",
            "headers": [
                ("content-disposition", 'form-data; name="doc"; filename="report.bin"'),
                ("content-type", "application/octet-stream"),
                ("x-custom", "yes"),
            ],
            "bytes": b"\x00\x01binary\r\n--not-a-boundary",
        },
    ]


async def test_async_for_yields_every_field_in_order() -> None:
    async def upload(form: Multipart) -> Response:
        out = [(field.name, await field.text()) async for field in form]
        return Response.json(out)

    parts = [Part(f"f{i}", f"value {i}".encode()) for i in range(5)]
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=encode(parts), headers=HEADERS)
    assert response.json() == [[f"f{i}", f"value {i}"] for i in range(5)]


async def test_an_empty_form_has_no_fields() -> None:
    async def upload(form: Multipart) -> Response:
        first = await form.next_field()
        return Response.json({"first": None if first is None else first.name})

    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=encode([]), headers=HEADERS)
    assert response.json() == {"first": None}


async def test_is_file_follows_the_filename_parameter_even_when_empty() -> None:
    async def upload(form: Multipart) -> Response:
        return Response.json([[f.name, f.is_file, f.file_name] async for f in form])

    body = encode([Part("plain", b"x"), Part("nofile", b"", filename="")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    # A browser sends filename="" for a file input left empty: still a file field.
    assert response.json() == [["plain", False, None], ["nofile", True, ""]]


# -- text() ------------------------------------------------------------------------------
async def test_text_uses_the_charset_of_the_part() -> None:
    async def upload(form: Multipart) -> Response:
        return Response.json([await f.text() async for f in form])

    body = encode(
        [
            Part("a", "café".encode("latin-1"), content_type="text/plain; charset=latin-1"),
            Part("b", "café".encode(), content_type="text/plain; charset=utf-8"),
        ]
    )
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.json() == ["café", "café"]


async def test_text_that_does_not_decode_is_400() -> None:
    async def upload(form: Multipart) -> Response:
        return Response.json([await f.text() async for f in form])

    body = encode([Part("bad", b"\xff\xfe")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert_error(response, 400, "'bad'", "utf-8")


# -- save_to_file ------------------------------------------------------------------------
async def test_save_to_file_writes_exactly_to_the_given_path(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "store" / "chosen-by-the-app.dat"
    target.parent.mkdir()
    content = bytes(range(256)) * 4096  # 1 MiB, every byte value
    results: list[FileField] = []

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        results.append(await field.save_to_file(target))
        return Response.text("saved")

    body = encode([Part("f", content, filename="../../../escape.txt")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert results == [FileField(target, len(content))]
    assert isinstance(results[0].path, pathlib.Path)
    assert target.read_bytes() == content
    # Nothing else was written anywhere under tmp_path (the client's name is never used).
    assert tree(tmp_path) == ["store", "store/chosen-by-the-app.dat"]


async def test_save_to_file_accepts_str_paths_and_empty_files(tmp_path: pathlib.Path) -> None:
    results: list[FileField] = []

    async def upload(form: Multipart) -> Response:
        async for field in form:
            results.append(await field.save_to_file(str(tmp_path / field.name)))
        return Response.text("saved")

    body = encode([Part("empty", b"", filename="e"), Part("one", b"1", filename="o")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert results == [FileField(tmp_path / "empty", 0), FileField(tmp_path / "one", 1)]
    assert (tmp_path / "empty").read_bytes() == b""
    assert (tmp_path / "one").read_bytes() == b"1"


# -- read once ---------------------------------------------------------------------------
Reader = Callable[[Field, pathlib.Path], Awaitable[object]]


async def _read_text(field: Field, _: pathlib.Path) -> object:
    return await field.text()


async def _read_bytes(field: Field, _: pathlib.Path) -> object:
    return await field.bytes()


async def _read_save(field: Field, directory: pathlib.Path) -> object:
    return await field.save_to_file(directory / f"copy-{len(tree(directory))}")


async def _read_chunks(field: Field, _: pathlib.Path) -> object:
    return b"".join([chunk async for chunk in field.chunks()])


READERS: dict[str, Reader] = {
    "text": _read_text,
    "bytes": _read_bytes,
    "save_to_file": _read_save,
    "chunks": _read_chunks,
}


@pytest.mark.parametrize("second", list(READERS))
@pytest.mark.parametrize("first", list(READERS))
async def test_content_is_consumed_once(first: str, second: str, tmp_path: pathlib.Path) -> None:
    outcome: dict[str, Any] = {}

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        outcome["first"] = await READERS[first](field, tmp_path)
        try:
            await READERS[second](field, tmp_path)
        except RuntimeError as exc:
            outcome["error"] = str(exc)
        after = await form.next_field()  # the form goes on normally
        outcome["next"] = None if after is None else (after.name, await after.text())
        return Response.text("done")

    body = encode([Part("avatar", b"hello", filename="a.txt"), Part("after", b"still here")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert outcome["error"] == "the content of field 'avatar' was already read"
    assert outcome["next"] == ("after", "still here")
    # The failed second read created no file.
    assert tree(tmp_path) == (["copy-0"] if first == "save_to_file" else [])


async def test_a_field_read_after_moving_on_raises(tmp_path: pathlib.Path) -> None:
    """Moving to the next field skips the rest of the current one, so its content is gone:
    reading it afterwards must say so, not return an empty value (or save an empty file)."""
    outcome: dict[str, str] = {}

    async def upload(form: Multipart) -> Response:
        first = await form.next_field()
        second = await form.next_field()
        third = await form.next_field()
        assert first is not None and second is not None and third is not None
        for label, read in [
            ("bytes", first.bytes),
            ("save", lambda: second.save_to_file(tmp_path / "late.txt")),
        ]:
            try:
                value = await read()
            except RuntimeError as exc:
                outcome[label] = f"RuntimeError: {exc}"
            else:
                outcome[label] = f"returned {value!r}"
        return Response.text("done")

    body = encode([Part("first", b"skipped 1"), Part("second", b"skipped 2"), Part("third")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert outcome["bytes"].startswith("RuntimeError:"), outcome
    assert outcome["save"].startswith("RuntimeError:"), outcome
    assert not (tmp_path / "late.txt").exists()


# -- skipping ----------------------------------------------------------------------------
async def test_reading_only_the_third_field_skips_a_large_unread_file() -> None:
    big = b"B" * (3 * MiB)
    names: list[str] = []

    async def upload(form: Multipart) -> Response:
        first = await form.next_field()
        second = await form.next_field()
        third = await form.next_field()
        assert first is not None and second is not None and third is not None
        names.extend([first.name, second.name, third.name])
        text = await third.text()
        return Response.json({"third": text, "end": await form.next_field() is None})

    body = encode(
        [
            Part("a", b"first value"),
            Part("big", big, filename="big.bin", content_type="application/octet-stream"),
            Part("c", b"the third field"),
        ]
    )
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert names == ["a", "big", "c"]
    assert response.json() == {"third": "the third field", "end": True}


async def test_moving_on_after_a_partial_read_skips_the_rest() -> None:
    async def upload(form: Multipart) -> Response:
        big = await form.next_field()
        assert big is not None
        chunks = big.chunks()
        first_chunk = await chunks.__anext__()
        after = await form.next_field()
        assert after is not None
        return Response.json(
            {"partial": len(first_chunk), "after": [after.name, await after.text()]}
        )

    body = encode([Part("big", b"x" * (2 * MiB), filename="b"), Part("tail", b"tail value")])
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    doc = response.json()
    assert 0 < doc["partial"] < 2 * MiB
    assert doc["after"] == ["tail", "tail value"]


async def test_breaking_out_of_async_for_leaves_the_rest_unread() -> None:
    async def upload(form: Multipart) -> Response:
        async for field in form:
            if field.name == "stop":
                break
        rest = [f.name async for f in form]  # a new iteration continues after "stop"
        return Response.json(rest)

    parts = [Part("a"), Part("stop", b"s" * 100_000), Part("b"), Part("c")]
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=encode(parts), headers=HEADERS)
    assert response.json() == ["b", "c"]


# -- httpx-built uploads -----------------------------------------------------------------
def _summary_router() -> Router:
    async def upload(form: Multipart) -> Response:
        out = []
        async for field in form:
            data = await field.bytes()
            out.append(
                {
                    "name": field.name,
                    "is_file": field.is_file,
                    "file_name": field.file_name,
                    "content_type": field.content_type,
                    "size": len(data),
                    "head": data[:32].decode("latin-1"),
                }
            )
        return Response.json(out)

    return Router().post("/u", upload)


async def test_httpx_data_and_files() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000
    async with TestClient(_summary_router()) as client:
        response = await client.post(
            "/u",
            data={"title": "holiday", "tags": ["sea", "sun"]},
            files=[
                ("photo", ("beach.png", png, "image/png")),
                ("photo", ("notes.txt", b"line 1\nline 2\n", "text/plain")),
            ],
        )
    assert response.status_code == 200, response.text
    assert response.json() == [
        {"name": "title", "is_file": False, "file_name": None, "content_type": None,
         "size": 7, "head": "holiday"},
        {"name": "tags", "is_file": False, "file_name": None, "content_type": None,
         "size": 3, "head": "sea"},
        {"name": "tags", "is_file": False, "file_name": None, "content_type": None,
         "size": 3, "head": "sun"},
        {"name": "photo", "is_file": True, "file_name": "beach.png", "content_type": "image/png",
         "size": len(png), "head": png[:32].decode("latin-1")},
        {"name": "photo", "is_file": True, "file_name": "notes.txt", "content_type": "text/plain",
         "size": 14, "head": "line 1\nline 2\n"},
    ]  # fmt: skip


async def test_httpx_file_saved_to_disk(tmp_path: pathlib.Path) -> None:
    content = b"0123456789abcdef" * (256 * 1024)  # 4 MiB

    async def upload(form: Multipart) -> Response:
        saved = [await f.save_to_file(tmp_path / f.name) async for f in form if f.is_file]
        return Response.json([[s.path.name, s.size] for s in saved])

    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post(
            "/u",
            data={"note": "ignored"},
            files={"archive": ("data.bin", content, "application/octet-stream")},
        )
    assert response.json() == [["archive", len(content)]]
    assert (tmp_path / "archive").read_bytes() == content


async def test_httpx_streamed_chunked_upload() -> None:
    body = encode([Part("f", b"z" * 300_000, filename="z.bin"), Part("g", b"end")])

    async def pieces() -> Any:
        for start in range(0, len(body), 7_001):  # odd sizes split boundaries and headers
            yield body[start : start + 7_001]

    async with TestClient(_summary_router()) as client:
        response = await client.post("/u", content=pieces(), headers=HEADERS)
    assert response.status_code == 200, response.text
    assert [(d["name"], d["size"]) for d in response.json()] == [("f", 300_000), ("g", 3)]
