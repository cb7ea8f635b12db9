"""``open_beneath`` on its own: what it opens, and what it holds while walking."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trioframe._files.beneath import open_beneath


def read(root: Path, parts: list[str]) -> bytes:
    fd = open_beneath(str(root), parts)
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


def test_dot_dot_in_the_parts_stays_beneath_unless_it_comes_back(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "x.txt").write_bytes(b"x")
    (tmp_path / "out.txt").write_bytes(b"out")
    assert read(root, ["a", "..", "x.txt"]) == b"x"
    assert read(root, ["..", "root", "x.txt"]) == b"x"  # out by name, back in: as realpath
    with pytest.raises(FileNotFoundError):
        open_beneath(str(root), ["..", "out.txt"])
    with pytest.raises(FileNotFoundError):
        open_beneath(str(root), ["a", "..", "..", "out.txt"])


def test_a_deep_path_holds_two_descriptors_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    deep = root.joinpath(*["d"] * 60)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_bytes(b"f")
    (deep / "up").symlink_to("/".join([".."] * 30) + "/" + "/".join(["d"] * 30) + "/f.txt")
    held: set[int] = set()
    most = 0
    original_open, original_close = os.open, os.close

    def open_(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        nonlocal most
        fd = original_open(path, flags, mode, dir_fd=dir_fd)
        held.add(fd)
        most = max(most, len(held))
        return fd

    def close(fd: int) -> None:
        held.discard(fd)
        original_close(fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "close", close)
    fd = open_beneath(str(root), [*["d"] * 60, "up"])
    assert held == {fd}
    assert os.read(fd, 10) == b"f"
    close(fd)
    assert most <= 2


def test_more_than_40_symlinks_in_a_row_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_bytes(b"f")
    for number in range(41):  # l0 -> l1 -> ... -> l40 -> f.txt: 41 links
        target = f"l{number + 1}" if number < 40 else "f.txt"
        (root / f"l{number}").symlink_to(target)
    assert read(root, ["l1"]) == b"f"  # 40 links
    with pytest.raises(OSError, match="symlinks"):
        open_beneath(str(root), ["l0"])
