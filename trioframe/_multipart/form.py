"""``Multipart`` and ``Field``: the streaming form API handlers use.

The body is pulled from the connection chunk by chunk as the handler asks for more; nothing
is buffered beyond the chunk being decoded and what the handler itself keeps.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .._errors import BadRequest
from .._http.headers import Headers
from .._markers import StreamedBody
from .charsets import text_codec
from .decoder import (
    Event,
    FormEnd,
    MultipartConfig,
    MultipartDecoder,
    PartData,
    PartEnd,
    PartStart,
    boundary_of,
)
from .files import FileField, write_exclusive

if TYPE_CHECKING:
    from .._request import Request

__all__ = ["Field", "Multipart"]


class Multipart(StreamedBody):
    """A ``multipart/form-data`` body, read one field at a time::

        while (field := await form.next_field()) is not None: ...
        async for field in form: ...

    Moving to the next field skips what was left of the current one. Cancellation: every
    read is a checkpoint while body bytes are still arriving; a cancelled form cannot be
    read further."""

    def __init__(self, request: Request, config: MultipartConfig) -> None:
        self._reader = request.body_reader
        boundary = boundary_of(request.headers.get_all("content-type"))
        self._decoder = MultipartDecoder(boundary, config)
        self._events: deque[Event] = deque()
        self._current: Field | None = None
        self._finished = False

    async def _next_event(self) -> Event:
        while not self._events:
            chunk = await self._reader()
            self._events.extend(self._decoder.feed(chunk) if chunk else self._decoder.finish())
        return self._events.popleft()

    async def next_field(self) -> Field | None:
        """The next field, or ``None`` after the last one."""
        current, self._current = self._current, None
        if current is not None:
            current._skipped = current._skipped or not current._consumed
            current._consumed = True  # what was left is gone: a later read must not pass
            await current._skip()
        if self._finished:
            return None
        event = await self._next_event()
        if isinstance(event, FormEnd):
            self._finished = True
            return None
        if not isinstance(event, PartStart):  # pragma: no cover - the decoder's order
            raise BadRequest("malformed multipart body")
        self._current = Field(self, event)
        return self._current

    def __aiter__(self) -> AsyncIterator[Field]:
        return self._fields()

    async def _fields(self) -> AsyncIterator[Field]:
        while (field := await self.next_field()) is not None:
            yield field


class Field:
    """One part of the form. Its content can be consumed once, by ``text()``, ``bytes()``,
    ``save_to_file()`` or ``chunks()``; a second read raises ``RuntimeError``.

    ``name`` and ``file_name`` are the decoded Unicode names (``filename*=UTF-8''...`` is
    preferred over ``filename=``; ``file_name`` is ``None`` without either); ``content_type``
    is the part's Content-Type value. ``headers`` are the part's headers as received: like
    request headers, their values read as ISO-8859-1 (``headers.raw`` has the bytes)."""

    def __init__(self, form: Multipart, start: PartStart) -> None:
        self._form = form
        self.name = start.name
        self.file_name = start.file_name
        self.content_type = start.content_type
        self.headers = Headers(start.headers)
        self._charset = start.charset
        self._consumed = False
        self._skipped = False
        self._done = False

    @property
    def is_file(self) -> bool:
        """True when the part carries a file name (``filename=`` in its disposition)."""
        return self.file_name is not None

    def __repr__(self) -> str:
        return f"<Field {self.name!r} file={self.file_name!r} type={self.content_type!r}>"

    def _claim(self) -> None:
        if self._skipped:
            raise RuntimeError(f"field {self.name!r} was skipped by moving to the next field")
        if self._consumed:
            raise RuntimeError(f"the content of field {self.name!r} was already read")
        self._consumed = True

    async def _pieces(self) -> AsyncIterator[bytes]:
        while not self._done:
            event = await self._form._next_event()
            if isinstance(event, PartData):
                yield event.data
            elif isinstance(event, PartEnd):
                self._done = True
            else:  # pragma: no cover - the decoder's order
                raise BadRequest("malformed multipart body")

    async def _skip(self) -> None:
        async for _ in self._pieces():
            pass

    def chunks(self) -> AsyncIterator[bytes]:
        """The content as it arrives, chunk by chunk."""
        self._claim()
        return self._pieces()

    async def bytes(self) -> bytes:
        """The whole content (bounded by ``max_field_size`` or ``max_file_size``)."""
        return b"".join([chunk async for chunk in self.chunks()])

    async def text(self) -> str:
        """The content as text: UTF-8 unless the part's Content-Type names another charset.
        400 for a charset outside ``charsets.TEXT_CODECS`` (checked before any content is
        read) and for content that does not decode."""
        charset = "utf-8" if self._charset is None else self._charset
        codec = text_codec(charset)
        if codec is None:
            raise BadRequest(f"field {self.name!r}: charset {charset[:40]!r} is not supported")
        data = await self.bytes()
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            raise BadRequest(f"field {self.name!r} is not valid {charset[:40]} text") from None

    async def save_to_file(self, path: str | os.PathLike[str]) -> FileField:
        """Stream the content into a new file at ``path`` (exactly that path: never a
        client-sent name). The file is created exclusively and a symlink is never followed;
        on cancellation or error the partial file is removed."""
        return await write_exclusive(path, self.chunks())
