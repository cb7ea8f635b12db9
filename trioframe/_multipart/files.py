"""Writing an uploaded part to disk safely, and ``safe_filename`` for client-sent names.

Only file-system calls live here (through trio's thread-backed async file API); no sockets.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import trio

__all__ = ["FileField", "safe_filename", "write_exclusive"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_MAX_NAME = 255
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_CREATE |= getattr(os, "O_CLOEXEC", 0)


@attrs.frozen
class FileField:
    """A part saved to disk: where, and how many bytes."""

    path: Path
    size: int


def safe_filename(name: str | None, default: str = "upload") -> str:
    """A safe base name for a client-sent file name: directories (``/`` and ``\\``) dropped,
    control characters and NUL removed, anything but letters, digits, ``. _ -`` and space
    replaced with ``_``, leading dots and spaces stripped (no hidden files, no ``..``), at most
    255 characters. An empty result becomes ``default``. The client's name is only data: use
    this before putting it into a path."""
    text = unicodedata.normalize("NFKC", name or "")
    text = text.replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    text = _UNSAFE.sub("_", text).strip(" .")
    if len(text) > _MAX_NAME:
        stem, dot, suffix = text.rpartition(".")
        keep = suffix[:16] if dot else ""
        text = (stem if dot else text)[: _MAX_NAME - len(keep) - len(dot)] + dot + keep
    return text or default


async def write_exclusive(path: str | os.PathLike[str], chunks: AsyncIterator[bytes]) -> FileField:
    """Create ``path`` (it must not exist; a symlink there is refused, never followed) and
    write ``chunks`` to it through trio's async file API.

    Cancellation or any error while writing removes the partly written file before the
    exception propagates, so an interrupted upload leaves nothing behind."""
    target = Path(path)
    fd = await trio.to_thread.run_sync(os.open, target, _CREATE, 0o644)
    file = trio.wrap_file(os.fdopen(fd, "wb", buffering=0))
    size = 0
    try:
        async for chunk in chunks:
            await file.write(chunk)
            size += len(chunk)
    except BaseException:
        with trio.CancelScope(shield=True):  # cleanup must finish even when cancelled
            await trio.aclose_forcefully(file)
            await trio.to_thread.run_sync(lambda: target.unlink(missing_ok=True))
        raise
    await file.aclose()
    return FileField(target, size)
