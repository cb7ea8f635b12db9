"""A sans-I/O multipart decoder: body chunks in, part events out, limits enforced.

python-multipart does the parsing; this module turns its callbacks into events, reads the
part headers, and applies ``MultipartConfig``. Every limit crossed is a ``PayloadTooLarge``
(413) naming the limit; a malformed body is a ``BadRequest`` (400).
"""

from __future__ import annotations

from email.message import Message
from typing import Any

import attrs
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser

from .._errors import BadRequest, PayloadTooLarge, UnsupportedMediaType

__all__ = ["FormEnd", "MultipartConfig", "MultipartDecoder", "PartData", "PartEnd", "PartStart"]

KiB = 1024
MiB = 1024 * KiB
MAX_BOUNDARY = 70  # RFC 2046 section 5.1.1


def _positive(_inst: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value <= 0:
        raise ValueError(f"MultipartConfig.{attribute.name} must be positive, not {value!r}")


@attrs.frozen(kw_only=True)
class MultipartConfig:
    """Limits for the ``Multipart`` extractor, set with ``Router.multipart_config``.

    ``max_total_size`` replaces ``ServerConfig.max_body_size`` on ``Multipart`` routes."""

    max_fields: int = attrs.field(default=100, validator=_positive)
    max_field_size: int = attrs.field(default=1 * MiB, validator=_positive)
    max_file_size: int = attrs.field(default=10 * MiB, validator=_positive)
    max_total_size: int = attrs.field(default=10 * MiB, validator=_positive)
    max_part_header_size: int = attrs.field(default=16 * KiB, validator=_positive)


@attrs.frozen
class PartStart:
    """A part begins: its headers (names lower-case), form field name, file name, type."""

    headers: tuple[tuple[str, str], ...]
    name: str
    file_name: str | None
    content_type: str | None


@attrs.frozen
class PartData:
    data: bytes


@attrs.frozen
class PartEnd:
    pass


@attrs.frozen
class FormEnd:
    pass


Event = PartStart | PartData | PartEnd | FormEnd


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` content type: 415 for another type, 400
    for a missing, empty or over-long boundary."""
    message = Message()
    message["content-type"] = content_type or ""
    if message.get_content_type() != "multipart/form-data":
        raise UnsupportedMediaType("expected Content-Type multipart/form-data")
    boundary = message.get_param("boundary")
    if not isinstance(boundary, str) or not boundary:
        raise BadRequest("multipart body without a boundary")
    if len(boundary) > MAX_BOUNDARY:
        raise BadRequest(f"multipart boundary longer than {MAX_BOUNDARY} characters")
    try:
        return boundary.encode("ascii")
    except UnicodeEncodeError:
        raise BadRequest("multipart boundary is not ASCII") from None


class MultipartDecoder:
    """Feed body chunks with :meth:`feed`, then call :meth:`finish` at the end of the body."""

    def __init__(self, boundary: bytes, config: MultipartConfig) -> None:
        self.config = config
        self._events: list[Event] = []
        self._header_bytes = 0
        self._field: bytearray = bytearray()
        self._value: bytearray = bytearray()
        self._headers: list[tuple[str, str]] = []
        self._fields = 0
        self._total = 0
        self._part_size = 0
        self._part_limit = 0
        self._part_limit_name = ""
        self._ended = False
        callbacks: Any = {
            "on_part_begin": self._on_part_begin,
            "on_header_field": self._on_header_field,
            "on_header_value": self._on_header_value,
            "on_header_end": self._on_header_end,
            "on_headers_finished": self._on_headers_finished,
            "on_part_data": self._on_part_data,
            "on_part_end": self._on_part_end,
            "on_end": self._on_end,
        }
        # python-multipart has caps of its own (8 header lines, ~4 KiB each) that would
        # answer 400 first; max_part_header_size is the limit, so lift theirs above it.
        self._parser = MultipartParser(
            boundary,
            callbacks,
            max_header_count=config.max_part_header_size,
            max_header_size=config.max_part_header_size + 64,
        )

    def feed(self, chunk: bytes) -> list[Event]:
        """Events decoded from ``chunk``. Raises ``PayloadTooLarge`` or ``BadRequest``."""
        self._total += len(chunk)
        if self._total > self.config.max_total_size:
            raise PayloadTooLarge(
                f"multipart body is larger than max_total_size ({self.config.max_total_size})"
            )
        try:
            self._parser.write(chunk)
        except MultipartParseError:
            raise BadRequest("malformed multipart body") from None
        events, self._events = self._events, []
        return events

    def finish(self) -> list[Event]:
        """The last events at the end of the body; 400 when the body ended early."""
        try:
            self._parser.finalize()
        except MultipartParseError:
            raise BadRequest("malformed multipart body") from None
        if not self._ended:
            raise BadRequest("multipart body ended before its closing boundary")
        events, self._events = self._events, []
        return events

    # -- python-multipart callbacks -------------------------------------------------------
    def _on_part_begin(self) -> None:
        self._fields += 1
        if self._fields > self.config.max_fields:
            raise PayloadTooLarge(f"more than max_fields ({self.config.max_fields}) parts")
        self._headers = []
        self._header_bytes = 0
        self._part_size = 0

    def _count_header(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > self.config.max_part_header_size:
            limit = self.config.max_part_header_size
            raise PayloadTooLarge(f"part headers larger than max_part_header_size ({limit})")

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._count_header(end - start)
        self._field += data[start:end]

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._count_header(end - start)
        self._value += data[start:end]

    def _on_header_end(self) -> None:
        name = self._field.decode("latin-1").strip().lower()
        value = self._value.decode("utf-8", "replace").strip()
        self._headers.append((name, value))
        self._field = bytearray()
        self._value = bytearray()

    def _on_headers_finished(self) -> None:
        message = Message()
        for name, value in self._headers:
            message[name] = value
        if message.get_content_disposition() != "form-data":
            raise BadRequest("multipart part without Content-Disposition: form-data")
        field_name = message.get_param("name", header="content-disposition")
        if not isinstance(field_name, str):
            raise BadRequest("multipart part without a field name")
        file_name = message.get_filename()
        content_type = message.get("content-type")
        if file_name is not None:
            self._part_limit, self._part_limit_name = self.config.max_file_size, "max_file_size"
        else:
            self._part_limit, self._part_limit_name = self.config.max_field_size, "max_field_size"
        self._events.append(
            PartStart(
                tuple(self._headers),
                field_name,
                file_name,
                str(content_type) if content_type else None,
            )
        )

    def _on_part_data(self, data: bytes, start: int, end: int) -> None:
        self._part_size += end - start
        if self._part_size > self._part_limit:
            raise PayloadTooLarge(
                f"a part is larger than {self._part_limit_name} ({self._part_limit})"
            )
        self._events.append(PartData(bytes(data[start:end])))

    def _on_part_end(self) -> None:
        self._events.append(PartEnd())

    def _on_end(self) -> None:
        self._ended = True
        self._events.append(FormEnd())
