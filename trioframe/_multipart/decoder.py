"""A sans-I/O multipart decoder: body chunks in, part events out, limits enforced.

python-multipart does the framing; this module turns its callbacks into events, reads the
part headers, and applies ``MultipartConfig``. Every limit crossed is a ``PayloadTooLarge``
(413) naming the limit; a malformed body is a ``BadRequest`` (400).

Part headers are kept as the bytes received. Content-Disposition and Content-Type are read
as UTF-8 (what browsers send), with ``parse_header_parameters`` and ``MediaType.parse``: a
value that is not UTF-8, malformed or ambiguous parameters, a Content-Type that is not
``type/subtype``, a repeated one of these headers, and a control character in any header
value are 400.

python-multipart logs a WARNING for each malformed body it refuses; any client can send
those, so the parser's records go to the ``trioframe.multipart`` logger at DEBUG instead (one
per malformed body): the client's 400 is the answer, the server's log is not the place.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser

from .._errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from .._http.grammar import FIELD_CONTROL_BYTES
from .._http.media import MediaType, essence
from .._http.params import ParameterError, parse_header_parameters

__all__ = ["FormEnd", "MultipartConfig", "MultipartDecoder", "PartData", "PartEnd", "PartStart"]

KiB = 1024
MiB = 1024 * KiB
MAX_BOUNDARY = 70  # RFC 2046 section 5.1.1


class _AtDebug(logging.LoggerAdapter[logging.Logger]):
    """A logger for python-multipart's parser that records everything at DEBUG level: what it
    reports is the client's malformed input, which the client hears about as a 400."""

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        super().log(logging.DEBUG, msg, *args, **kwargs)


_PARSER_LOG = _AtDebug(logging.getLogger("trioframe.multipart"))


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
    """A part begins: its headers as received (names lower-case), the form field name and
    file name (decoded: ``filename*`` preferred over ``filename``), its Content-Type value,
    and the ``charset`` parameter of that Content-Type."""

    headers: tuple[tuple[bytes, bytes], ...]
    name: str
    file_name: str | None
    content_type: str | None
    charset: str | None


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


def boundary_of(content_types: list[str]) -> bytes:
    """The boundary in the request's Content-Type header (``content_types``: its values):
    415 for a type other than ``multipart/form-data``, 400 for a repeated header, malformed
    parameters and a missing, empty, over-long or non-ASCII boundary."""
    if len(content_types) > 1:
        raise BadRequest("more than one Content-Type header")
    value = content_types[0] if content_types else ""
    if essence(value) != "multipart/form-data":
        raise UnsupportedMediaType("expected Content-Type multipart/form-data")
    try:
        boundary = MediaType.parse(value).params.get("boundary")
    except ParameterError as exc:
        raise BadRequest(f"malformed Content-Type: {exc}") from None
    if not boundary:
        raise BadRequest("multipart body without a boundary")
    if len(boundary) > MAX_BOUNDARY:
        raise BadRequest(f"multipart boundary longer than {MAX_BOUNDARY} characters")
    try:
        return boundary.encode("ascii")
    except UnicodeEncodeError:
        raise BadRequest("multipart boundary is not ASCII") from None


def _malformed(label: str, problem: ParameterError) -> BadRequest:
    """The 400 for a part header ``label`` whose parameters cannot be read."""
    return BadRequest(f"multipart part header {label}: {problem}")


class MultipartDecoder:
    """Feed body chunks with :meth:`feed`, then call :meth:`finish` at the end of the body."""

    def __init__(self, boundary: bytes, config: MultipartConfig) -> None:
        self.config = config
        self._events: list[Event] = []
        self._header_bytes = 0
        self._field: bytearray = bytearray()
        self._value: bytearray = bytearray()
        self._headers: list[tuple[bytes, bytes]] = []
        self._fields = 0
        self._total = 0
        self._part_size = 0
        self._part_limit = 0
        self._part_limit_name = ""
        self._ended = False
        self._before_first_delimiter = True
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
        self._parser.logger = _PARSER_LOG  # type: ignore[assignment]  # an adapter, same calls

    def feed(self, chunk: bytes) -> list[Event]:
        """Events decoded from ``chunk``. Raises ``PayloadTooLarge`` or ``BadRequest``."""
        self._total += len(chunk)
        if self._total > self.config.max_total_size:
            raise PayloadTooLarge(
                f"multipart body is larger than max_total_size ({self.config.max_total_size})"
            )
        if self._before_first_delimiter:
            self._check_start(chunk)
        try:
            self._parser.write(chunk)
        except MultipartParseError:
            raise BadRequest("malformed multipart body") from None
        events, self._events = self._events, []
        return events

    def _check_start(self, chunk: bytes) -> None:
        """The body may open with blank lines, then its first delimiter. python-multipart
        skips from a leading CR or LF to the next ``-`` *of the same chunk*, so whatever lay
        between was accepted or refused depending on where the body was cut: refuse it."""
        start = chunk.lstrip(b"\r\n")
        if start:
            self._before_first_delimiter = False
            if not start.startswith(b"-"):
                raise BadRequest("malformed multipart body")

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
        name = bytes(self._field).lower()  # python-multipart let only token bytes through
        value = bytes(self._value).strip(b" \t")
        if FIELD_CONTROL_BYTES.search(value):
            shown = name.decode("latin-1").title()
            raise BadRequest(f"multipart part header {shown} contains a control character")
        self._headers.append((name, value))
        self._field = bytearray()
        self._value = bytearray()

    def _header(self, name: bytes) -> str | None:
        """The value of the part header ``name`` as UTF-8 text, ``None`` when absent; 400
        when it is repeated or not valid UTF-8."""
        values = [value for key, value in self._headers if key == name]
        if not values:
            return None
        shown = name.decode("latin-1").title()
        if len(values) > 1:
            raise BadRequest(f"multipart part with more than one {shown} header")
        try:
            return values[0].decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"multipart part header {shown} is not valid UTF-8") from None

    def _on_headers_finished(self) -> None:
        disposition = self._header(b"content-disposition")
        if disposition is None:
            raise BadRequest("multipart part without Content-Disposition: form-data")
        try:
            kind, params = parse_header_parameters(disposition)
        except ParameterError as exc:
            raise _malformed("Content-Disposition", exc) from None
        if kind != "form-data":
            raise BadRequest("multipart part without Content-Disposition: form-data")
        field_name = params.get("name")
        if field_name is None:
            raise BadRequest("multipart part without a field name")
        file_name = params.get("filename")
        content_type = self._header(b"content-type") or None  # empty counts as absent
        charset = None
        if content_type is not None:
            try:
                charset = MediaType.parse(content_type).charset
            except ParameterError as exc:
                raise _malformed("Content-Type", exc) from None
        if file_name is not None:
            self._part_limit, self._part_limit_name = self.config.max_file_size, "max_file_size"
        else:
            self._part_limit, self._part_limit_name = self.config.max_field_size, "max_field_size"
        self._events.append(
            PartStart(tuple(self._headers), field_name, file_name, content_type, charset)
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
