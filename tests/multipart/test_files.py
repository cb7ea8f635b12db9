"""File safety: ``save_to_file`` creates exclusively, never follows a symlink, removes what it
wrote when the upload fails; ``safe_filename`` turns a client-sent name into a safe base
name."""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest

from trioframe import Multipart, MultipartConfig, Response, Router, safe_filename
from trioframe.testing import TestClient

from ._support import CONTENT_TYPE, Part, assert_error, encode, tree

HEADERS = {"content-type": CONTENT_TYPE}
UPLOAD = b"uploaded content " * 1000


def _saving_router(target: pathlib.Path, outcome: dict[str, Any]) -> Router:
    """POST /u saves the first field to ``target`` and reports the exception, if any."""

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        try:
            saved = await field.save_to_file(target)
        except OSError as exc:
            outcome["error"] = exc
            return Response.text(type(exc).__name__, status=409)
        outcome["size"] = saved.size
        return Response.text("saved")

    return Router().post("/u", upload)


async def _post_file(router: Router) -> int:
    body = encode([Part("f", UPLOAD, filename="x.txt")])
    async with TestClient(router) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    return response.status_code


# -- exclusive create --------------------------------------------------------------------
async def test_save_to_an_existing_file_is_file_exists_error(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "existing.txt"
    target.write_bytes(b"precious")
    outcome: dict[str, Any] = {}
    assert await _post_file(_saving_router(target, outcome)) == 409
    assert isinstance(outcome["error"], FileExistsError)
    assert target.read_bytes() == b"precious"
    assert tree(tmp_path) == ["existing.txt"]


async def test_save_twice_to_the_same_path_keeps_the_first(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "once.txt"
    results: list[str] = []

    async def upload(form: Multipart) -> Response:
        async for field in form:
            try:
                await field.save_to_file(target)
                results.append(f"{field.name}: saved")
            except FileExistsError:
                results.append(f"{field.name}: exists")
        return Response.text("done")

    body = encode([Part("a", b"first", filename="a"), Part("b", b"second", filename="b")])
    async with TestClient(Router().post("/u", upload)) as client:
        await client.post("/u", content=body, headers=HEADERS)
    assert results == ["a: saved", "b: exists"]
    assert target.read_bytes() == b"first"


# -- symlinks ----------------------------------------------------------------------------
async def test_symlink_to_a_real_file_is_refused(tmp_path: pathlib.Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"do not touch")
    link = tmp_path / "upload.txt"
    link.symlink_to(victim)
    outcome: dict[str, Any] = {}
    assert await _post_file(_saving_router(link, outcome)) == 409
    assert isinstance(outcome["error"], FileExistsError)  # O_EXCL: EEXIST for any link
    assert victim.read_bytes() == b"do not touch"
    assert link.is_symlink() and os.readlink(link) == str(victim)


async def test_dangling_symlink_is_refused_and_its_target_not_created(
    tmp_path: pathlib.Path,
) -> None:
    missing = tmp_path / "elsewhere" / "created-through-link.txt"
    missing.parent.mkdir()
    link = tmp_path / "upload.txt"
    link.symlink_to(missing)
    outcome: dict[str, Any] = {}
    assert await _post_file(_saving_router(link, outcome)) == 409
    assert isinstance(outcome["error"], FileExistsError)  # O_EXCL: EEXIST for any link
    assert not missing.exists()
    assert tree(missing.parent) == []
    assert link.is_symlink()


async def test_symlink_to_a_directory_is_refused(tmp_path: pathlib.Path) -> None:
    directory = tmp_path / "dir"
    directory.mkdir()
    link = tmp_path / "upload"
    link.symlink_to(directory)
    outcome: dict[str, Any] = {}
    assert await _post_file(_saving_router(link, outcome)) == 409
    assert isinstance(outcome["error"], FileExistsError)  # O_EXCL: EEXIST for any link
    assert tree(directory) == []


async def test_saving_creates_a_plain_file_with_no_group_or_other_write(
    tmp_path: pathlib.Path,
) -> None:
    target = tmp_path / "plain.txt"
    outcome: dict[str, Any] = {}
    assert await _post_file(_saving_router(target, outcome)) == 200
    assert outcome["size"] == len(UPLOAD)
    assert target.is_file() and not target.is_symlink()
    assert target.stat().st_mode & 0o022 == 0
    assert target.read_bytes() == UPLOAD


# -- partial files -----------------------------------------------------------------------
async def test_a_file_over_max_file_size_is_413_and_the_partial_file_removed(
    tmp_path: pathlib.Path,
) -> None:
    limit = 200_000
    target = tmp_path / "big.bin"
    started: list[bool] = []

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        started.append(True)
        await field.save_to_file(target)
        return Response.text("unreachable")

    router = Router().post("/u", upload).multipart_config(MultipartConfig(max_file_size=limit))
    # Chunks arrive 64 KiB at a time, so several are written before the limit is crossed.
    body = encode([Part("f", b"x" * (limit + 1), filename="big.bin")])
    async with TestClient(router) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert_error(response, 413, "max_file_size")
    assert started == [True]
    assert not target.exists()
    assert tree(tmp_path) == []


async def test_a_malformed_body_while_saving_removes_the_partial_file(
    tmp_path: pathlib.Path,
) -> None:
    target = tmp_path / "cut.bin"

    async def upload(form: Multipart) -> Response:
        field = await form.next_field()
        assert field is not None
        await field.save_to_file(target)
        return Response.text("unreachable")

    body = encode([Part("f", b"y" * 300_000, filename="cut.bin")], close=False)
    body = body[: -len(b"\r\n")]  # the content never ends: no delimiter at all
    async with TestClient(Router().post("/u", upload)) as client:
        response = await client.post("/u", content=body, headers=HEADERS)
    assert_error(response, 400, "closing boundary")
    assert not target.exists()


# -- safe_filename -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("client_name", "safe"),
    [
        ("photo.png", "photo.png"),
        ("../../etc/passwd", "passwd"),
        ("..\\win.ini", "win.ini"),
        ("..\\..\\Windows\\System32\\drivers\\etc\\hosts", "hosts"),
        ("/etc/shadow", "shadow"),
        ("/absolute/dir/report.pdf", "report.pdf"),
        ("C:\\Users\\ada\\cv.docx", "cv.docx"),
        ("a\x00b.txt", "ab.txt"),
        ("evil.txt\x00.png", "evil.txt.png"),
        ("line\r\nbreak.txt", "linebreak.txt"),
        ("", "upload"),
        ("..", "upload"),
        (".", "upload"),
        ("...", "upload"),
        ("../", "upload"),
        ("dir/", "upload"),
        ("\x00", "upload"),
        (".bashrc", "bashrc"),
        ("..hidden.txt", "hidden.txt"),
        (" . leading.txt", "leading.txt"),
        ("trailing. ", "trailing"),
        ("my photo (1).png", "my photo _1_.png"),
        ("semi;colon&amp$.txt", "semi_colon_amp_.txt"),
        ("\uff46\uff55\uff4c\uff4c.txt", "full.txt"),  # NFKC: full-width letters become ASCII
        ("rtl\u202etxt.exe", "rtltxt.exe"),  # the bidi override is dropped
        # Only ASCII letters and digits are kept: names in other scripts keep their suffix.
        ("写真.jpg", "_.jpg"),
        ("Отчёт.pdf", "_.pdf"),
        ("🙂.png", "_.png"),
        ("Grüße.txt", "Gr_e.txt"),
        ("写真", "_"),
    ],
)
def test_safe_filename(client_name: str, safe: str) -> None:
    assert safe_filename(client_name) == safe


@pytest.mark.parametrize("client_name", [None, "", "..", "/", "\\"])
def test_safe_filename_default(client_name: str | None) -> None:
    assert safe_filename(client_name) == "upload"
    assert safe_filename(client_name, default="file.bin") == "file.bin"


@pytest.mark.parametrize(
    ("client_name", "suffix"),
    [
        ("a" * 300 + ".png", ".png"),
        ("b" * 1000 + ".tar.gz", ".gz"),
        ("c" * 254 + ".jpeg", ".jpeg"),
        ("d" * 300, "d"),
    ],
)
def test_safe_filename_long_names_fit_255_and_keep_the_extension(
    client_name: str, suffix: str
) -> None:
    safe = safe_filename(client_name)
    assert len(safe) == 255
    assert len(safe.encode()) == 255
    assert safe.endswith(suffix)
    assert safe[0] == client_name[0]


@pytest.mark.parametrize(
    "client_name",
    ["../../etc/passwd", "..\\win.ini", "/x/..", "a/../../b", "\x00/..", "....//", "\u2025/x"],
)
def test_safe_filename_never_leaves_the_directory(client_name: str, tmp_path: pathlib.Path) -> None:
    safe = safe_filename(client_name)
    assert safe and "/" not in safe and "\\" not in safe and "\x00" not in safe
    assert safe not in (".", "..") and not safe.startswith(".")
    assert (tmp_path / safe).resolve().parent == tmp_path.resolve()


def test_safe_filename_output_is_already_safe() -> None:
    for name in ["../../etc/passwd", "x" * 400 + ".png", "\uff46\uff55\uff4c\uff4c.txt", "a b.c"]:
        once = safe_filename(name)
        assert safe_filename(once) == once
