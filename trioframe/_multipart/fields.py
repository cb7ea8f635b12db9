"""``Form[T]`` over ``multipart/form-data``: the non-file fields as ``(name, text)`` pairs,
decoded a chunk at a time as the body arrives.

Every ``MultipartConfig`` limit applies as for ``Multipart`` (413 naming the limit). Only the
text fields' values are kept, each bounded by ``max_field_size``: a file part's content is
skipped as it passes (still bounded by ``max_file_size``), unless the part is named like a
field of ``T``, which is a 422 at once. Awaiting the body is the only I/O; nothing here
imports trio (the extractor planner imports this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .._errors import BadRequest, ValidationError
from .charsets import text_codec
from .decoder import (
    Event,
    MultipartConfig,
    MultipartDecoder,
    PartData,
    PartEnd,
    PartStart,
    boundary_of,
)

if TYPE_CHECKING:
    from .._request import Request

__all__ = ["FormReading", "read_form_fields"]


@attrs.define
class FormReading:
    """How a handler's ``Form[T]`` reads a multipart body, decided once its whole plan is
    known: ``streams`` when nothing else reads the body (only the text fields' values are
    kept), otherwise from the body as it is buffered for a ``Request``, a ``Body`` or another
    ``Form`` of the same plan."""

    streams: bool = True


class _TextFields:
    """Decoder events in, the text fields' ``(name, value)`` pairs out (``pairs``)."""

    def __init__(self, refused_files: frozenset[str]) -> None:
        self.pairs: list[tuple[str, str]] = []
        self._refused_files = refused_files
        self._name: str | None = None  # the text field being read; None while skipping
        self._codec = "utf-8"
        self._charset = "utf-8"
        self._content = bytearray()

    def feed(self, events: list[Event]) -> None:
        for event in events:
            if type(event) is PartData:
                if self._name is not None:
                    self._content += event.data
            elif type(event) is PartStart:
                self._start(event)
            elif type(event) is PartEnd and self._name is not None:
                self._end(self._name)

    def _start(self, part: PartStart) -> None:
        self._name = None
        if part.file_name is not None:
            if part.name in self._refused_files:
                raise ValidationError(
                    [
                        f"body.{part.name}: expected a text field, got a file (Multipart reads files)"
                    ],
                    message="request body does not fit",
                )
            return
        charset = "utf-8" if part.charset is None else part.charset
        codec = text_codec(charset)
        if codec is None:
            raise BadRequest(f"field {part.name!r}: charset {charset[:40]!r} is not supported")
        self._name, self._codec, self._charset = part.name, codec, charset
        self._content = bytearray()

    def _end(self, name: str) -> None:
        try:
            value = self._content.decode(self._codec)
        except UnicodeDecodeError:
            raise BadRequest(f"field {name!r} is not valid {self._charset[:40]} text") from None
        self.pairs.append((name, value))
        self._name = None


async def read_form_fields(
    request: Request, config: MultipartConfig, refused_files: frozenset[str], streams: bool
) -> list[tuple[str, str]]:
    """The text fields of the request's ``multipart/form-data`` body, in order. A file part
    named in ``refused_files`` is a 422; other file parts are skipped.

    With ``streams`` (nothing else reads this body) the chunks go from the connection
    through the decoder and are not kept; otherwise the body is read with
    ``request.read_body``, so that other readers find it buffered. Raises 400 for a
    malformed body or a field that does not decode, 413 for a limit crossed. Cancellation:
    a checkpoint while body bytes are still arriving; the body is then left partly read."""
    decoder = MultipartDecoder(boundary_of(request.headers.get_all("content-type")), config)
    fields = _TextFields(refused_files)
    if streams and not request.body_consumed:
        receive = request.body_reader
        while chunk := await receive():
            fields.feed(decoder.feed(chunk))
    else:
        await request.read_body(lambda chunk: fields.feed(decoder.feed(chunk)))
    fields.feed(decoder.finish())
    return fields.pairs
