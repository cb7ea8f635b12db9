"""File uploads with ``Multipart``: an HTML form, a 10 MiB cap and a short list of file types.

What it shows:

* ``GET /`` is an HTML page with a form (``enctype="multipart/form-data"``): a text field and
  a file input.
* ``POST /upload`` takes ``form: Multipart`` and reads the body one field at a time as it
  arrives: text fields with ``field.text()``, files straight to disk with
  ``field.save_to_file(path)``, so an upload is never held in memory.
* ``MultipartConfig(max_total_size=10 MiB, max_file_size=10 MiB)`` on the router caps the
  upload: a bigger one is answered 413 (before the handler runs when the declared
  ``Content-Length`` is already too big).
* Only ``image/png``, ``image/jpeg`` and ``text/plain`` files are accepted; any other type is
  400 (``Error.bad_request``). The type is the one the client declares for the part: check
  the bytes as well if that matters to you.
* Every upload gets a fresh directory ``<UPLOAD_DIR>/<uuid>/`` (``UPLOAD_DIR`` is an
  environment variable, ``uploads`` by default), created with trio's async path API. File
  names come from ``safe_filename(field.file_name)`` (the client's name is only data) and
  are made unique within the upload. A rejected upload removes its directory.
* The answer is JSON: the upload id, the text fields (name and size in bytes) and the saved
  files (field name, saved file name, type, size).

Run it with ``python examples/upload.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), open
http://127.0.0.1:3000/ in a browser, or::

    curl -F title=holiday -F 'file=@cat.png;type=image/png' localhost:3000/upload
    curl -F 'file=@notes.txt;type=text/plain' -F 'file=@dog.jpg;type=image/jpeg' \\
        localhost:3000/upload
    curl -F 'file=@report.pdf;type=application/pdf' localhost:3000/upload     # 400
"""

from __future__ import annotations

import functools
import logging
import os
import pathlib
import shutil
import uuid
from typing import Any

import trio

from trioframe import (
    Error,
    Multipart,
    MultipartConfig,
    Response,
    Router,
    Server,
    safe_filename,
)

MiB = 1024 * 1024
MAX_UPLOAD = 10 * MiB
ALLOWED_TYPES = frozenset({"image/png", "image/jpeg", "text/plain"})
UPLOAD_DIR = pathlib.Path(os.environ.get("UPLOAD_DIR", "uploads"))

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Upload</title></head>
<body>
  <h1>Upload files</h1>
  <form action="/upload" method="post" enctype="multipart/form-data">
    <p><label>Title <input type="text" name="title"></label></p>
    <p><label>Files (PNG, JPEG or plain text, 10 MiB in all)
      <input type="file" name="file" accept="image/png,image/jpeg,text/plain" multiple>
    </label></p>
    <p><button type="submit">Upload</button></p>
  </form>
</body>
</html>
"""


async def form_page() -> Response:
    return Response.html(PAGE)


def media_type(content_type: str | None) -> str:
    """``image/png`` from ``image/png; name=x``; ``""`` when the part declares no type."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``2-name``, ``3-name``... when an earlier file of the upload has it."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = safe_filename(f"{number}-{name}")
    taken.add(candidate)
    return candidate


async def upload(form: Multipart) -> Response:
    directory = trio.Path(UPLOAD_DIR, uuid.uuid4().hex)
    created = False
    fields: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    taken: set[str] = set()
    try:
        async for field in form:
            if not field.is_file:
                fields.append({"name": field.name, "size": len((await field.text()).encode())})
                continue
            if not field.file_name:
                continue  # a file input left empty: browsers send an empty, nameless part
            kind = media_type(field.content_type)
            if kind not in ALLOWED_TYPES:
                raise Error.bad_request(
                    f"{field.file_name!r} has type {kind or 'none'!r}; "
                    "only image/png, image/jpeg and text/plain are accepted"
                )
            if not created:
                await directory.mkdir(parents=True)
                created = True
            name = unique_name(safe_filename(field.file_name), taken)
            saved = await field.save_to_file(directory / name)
            files.append(
                {"field": field.name, "file_name": name, "content_type": kind, "size": saved.size}
            )
    except BaseException:
        if created:  # a rejected or interrupted upload leaves nothing behind
            with trio.CancelScope(shield=True):
                remove = functools.partial(shutil.rmtree, directory, ignore_errors=True)
                await trio.to_thread.run_sync(remove)
        raise
    upload_id = directory.name if created else None
    return Response.json({"id": upload_id, "fields": fields, "files": files})


router = (
    Router()
    .get("/", form_page)
    .post("/upload", upload)
    .multipart_config(
        MultipartConfig(max_fields=20, max_file_size=MAX_UPLOAD, max_total_size=MAX_UPLOAD)
    )
)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
