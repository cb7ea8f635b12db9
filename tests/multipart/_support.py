"""Helpers for the multipart tests: byte-exact ``multipart/form-data`` bodies, the error
body check, and small waiting and file-listing helpers.

httpx picks its own boundary and header layout; the limit tests need to know every byte, so
they build bodies here. ``encode`` writes each part as::

    --BOUNDARY CRLF
    Name: value CRLF          (one line per header, in the order given)
    CRLF
    content CRLF
    ...
    --BOUNDARY-- CRLF

and the helpers below say how the decoder counts what was written.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any

import attrs
import httpx
import trio
import trio.testing

__all__ = [
    "BOUNDARY",
    "CONTENT_TYPE",
    "Part",
    "assert_error",
    "content_type",
    "encode",
    "header_bytes",
    "headers_for",
    "overhead",
    "padded_part",
    "tree",
    "wait_until",
]

BOUNDARY = "test-boundary-7MA4YWxkTrZu0gW"
KiB = 1024
MiB = 1024 * KiB


def content_type(boundary: str = BOUNDARY) -> str:
    return f"multipart/form-data; boundary={boundary}"


CONTENT_TYPE = content_type()


@attrs.frozen
class Part:
    """One part. ``disposition`` replaces the generated Content-Disposition value; ``None``
    for ``name`` leaves ``name=`` out. ``extra`` headers follow the generated ones."""

    name: str | None
    content: bytes = b""
    filename: str | None = None
    content_type: str | None = None
    extra: tuple[tuple[str, str], ...] = ()
    disposition: str | None = None
    no_disposition: bool = False

    def with_content(self, content: bytes) -> Part:
        return attrs.evolve(self, content=content)


def headers_for(part: Part) -> list[tuple[str, str]]:
    """The header lines ``encode`` writes for ``part``, in order."""
    headers: list[tuple[str, str]] = []
    if not part.no_disposition:
        value = part.disposition
        if value is None:
            value = "form-data"
            if part.name is not None:
                value += f'; name="{part.name}"'
            if part.filename is not None:
                value += f'; filename="{part.filename}"'
        headers.append(("Content-Disposition", value))
    if part.content_type is not None:
        headers.append(("Content-Type", part.content_type))
    headers.extend(part.extra)
    return headers


def header_bytes(part: Part) -> int:
    """What the decoder counts against ``max_part_header_size`` for ``part``: the bytes of
    every header name and value (``_count_header`` sees the name up to the colon and the value
    after the spaces that follow the colon, up to the CR; neither the ``": "`` nor the CRLF)."""
    return sum(len(name.encode()) + len(value.encode()) for name, value in headers_for(part))


def encode(
    parts: Sequence[Part], boundary: str = BOUNDARY, *, close: bool = True, preamble: bytes = b""
) -> bytes:
    """The body for ``parts``; ``close=False`` leaves out the closing boundary."""
    dash = b"--" + boundary.encode("ascii")
    out = bytearray(preamble)
    for part in parts:
        out += dash + b"\r\n"
        for name, value in headers_for(part):
            out += name.encode() + b": " + value.encode() + b"\r\n"
        out += b"\r\n" + part.content + b"\r\n"
    if close:
        out += dash + b"--\r\n"
    return bytes(out)


def overhead(parts: Sequence[Part], boundary: str = BOUNDARY) -> int:
    """The bytes of ``encode(parts)`` that are not part content (framing and headers)."""
    return len(encode([p.with_content(b"") for p in parts], boundary))


def padded_part(name: str, size: int, *, pad_line: int = 4000) -> Part:
    """A field whose header bytes (as ``header_bytes`` counts them) are exactly ``size``:
    Content-Disposition plus ``X-Pad-N`` headers. Each pad line stays under ``pad_line``
    bytes, inside python-multipart's own per-line cap, so only the decoder's
    ``max_part_header_size`` is under test here."""
    part = Part(name, b"v")
    extra: list[tuple[str, str]] = []
    left = size - header_bytes(part)
    index = 0
    while left > 0:
        key = f"X-Pad-{index}" if left > 16 or extra else "X"
        value_len = min(pad_line, left - len(key))
        if value_len < 1:  # too little left for another line: grow the previous one
            prev_key, prev_value = extra.pop()
            extra.append((prev_key, prev_value + "p" * left))
            left = 0
            break
        extra.append((key, "p" * value_len))
        left -= len(key) + value_len
        index += 1
    part = attrs.evolve(part, extra=tuple(extra))
    assert header_bytes(part) == size, (header_bytes(part), size)
    return part


def assert_error(response: httpx.Response, status: int, *fragments: str) -> dict[str, Any]:
    """``response`` is ``status`` with the standard error body whose message contains every
    fragment."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].split(";")[0] == "application/json"
    body: dict[str, Any] = json.loads(response.content)
    assert set(body) == {"status", "error", "message"}, body
    assert body["status"] == status
    assert body["error"] == HTTPStatus(status).phrase
    for fragment in fragments:
        assert fragment in body["message"], (fragment, body["message"])
    return body


def tree(directory: pathlib.Path) -> list[str]:
    """Every path under ``directory``, relative, sorted (``a``, ``a/b.txt``, ...)."""
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


async def wait_until(condition: Callable[[], bool]) -> None:
    """Let every task run until ``condition()`` holds. Work in worker threads (files are
    opened and written through ``trio.to_thread``) can leave every task blocked before it
    is done, so the check repeats after each quiet point; the caller bounds the time."""
    while not condition():
        await trio.testing.wait_all_tasks_blocked()
