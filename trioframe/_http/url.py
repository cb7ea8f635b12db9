"""Request targets: the ``Uri`` value, percent-decoding and query-string parsing.

Sans-I/O and strict: invalid percent-encoding or invalid UTF-8 raise ``ValueError`` for
the caller to turn into a 400. Both decoders run at C speed whatever the input (a form body
can be 10 MiB of escapes): each takes a fixed number of passes of ``bytes`` methods and
``binascii``, and Python-level work only once per field.
"""

from __future__ import annotations

import binascii
import codecs

__all__ = ["QueryDecoder", "Uri", "parse_query", "percent_decode", "split_target", "unescape"]

MAX_QUERY_FIELDS = 1000

# Quoted-printable, which ``binascii.a2b_qp`` decodes in C, writes a byte as "=XX" where a
# URL writes "%XX". ``unescape`` maps "%" to "=" and stands 0xFF in for a literal "="
# (0xFF never occurs in UTF-8, so it cannot be confused with text), then maps it back.
_STAND_IN = b"\xff"
_TO_QUOTED_PRINTABLE = bytes.maketrans(b"%=", b"=" + _STAND_IN)
_TO_QUOTED_PRINTABLE_PLUS = bytes.maketrans(b"%=+", b"=" + _STAND_IN + b" ")
_FROM_STAND_IN = bytes.maketrans(_STAND_IN, b"=")
_PLUS_TO_SPACE = bytes.maketrans(b"+", b" ")
# Single bytes as ints: ``int in bytes`` is the fast membership test.
_PERCENT, _PLUS, _EQUALS, _CR, _LF = b"%+=\r\n"
# Every byte but "&" becomes "x": in this mask of a query, ``find`` skips separators.
_FIELD_MASK = bytes.maketrans(bytes(b for b in range(256) if b != ord("&")), b"x" * 255)


def unescape(raw: bytes, *, plus_is_space: bool = False) -> bytes:
    """Decode the ``%XX`` escapes of ``raw`` (and ``+`` as a space when asked). A ``%`` not
    followed by two hex digits raises ``ValueError``; so does an escape that produces 0xFF
    in text with a literal ``=`` (0xFF is not UTF-8: the caller would refuse it anyway)."""
    if _PERCENT not in raw:
        return raw.translate(_PLUS_TO_SPACE) if plus_is_space and _PLUS in raw else raw
    escapes = raw.count(b"%")
    if (_CR in raw or _LF in raw) and (b"%\r" in raw or b"%\n" in raw):
        # invalid, and a2b_qp would take "=" before a line break for a soft line break
        raise ValueError("invalid percent-encoding")
    table = _TO_QUOTED_PRINTABLE_PLUS if plus_is_space else _TO_QUOTED_PRINTABLE
    decoded = binascii.a2b_qp(raw.translate(table))
    # A valid escape is three bytes in, one out; a2b_qp keeps a malformed one (all of it,
    # or all but one byte for "==" and a trailing "="), so any malformed escape shows here.
    if len(raw) - len(decoded) != 2 * escapes:
        raise ValueError("invalid percent-encoding")
    if _EQUALS in raw:
        if decoded.count(_STAND_IN) != raw.count(b"="):
            raise ValueError("invalid UTF-8: a 0xFF byte")
        decoded = decoded.translate(_FROM_STAND_IN)
    return decoded


def percent_decode(text: str, *, plus_is_space: bool = False) -> str:
    """Decode ``%XX`` escapes strictly: a malformed escape or non-UTF-8 result raises
    ``ValueError``."""
    if "%" not in text:
        return text.replace("+", " ") if plus_is_space else text
    raw = unescape(text.encode("utf-8"), plus_is_space=plus_is_space)
    return raw.decode("utf-8")  # UnicodeDecodeError is a ValueError


class QueryDecoder:
    """``parse_query`` fed piece by piece, as a form body arrives::

        decoder = QueryDecoder()
        for chunk in chunks:
            decoder.feed(chunk)
        pairs = decoder.finish()

    The work of each ``feed`` is proportional to its chunk, whatever the size of a field,
    so a large body is decoded a chunk at a time between reads. ``feed`` and ``finish``
    raise ``ValueError`` as soon as a field is malformed or one field too many begins.
    """

    def __init__(self, max_fields: int = MAX_QUERY_FIELDS) -> None:
        self.max_fields = max_fields
        self._pairs: list[tuple[str, str]] = []
        self._in_field = False  # some bytes of the current field were fed
        self._name: str | None = None  # the current field's name, once its "=" was fed
        self._parts: list[str] = []  # its name (or value) so far
        self._utf8 = codecs.getincrementaldecoder("utf-8")()  # for a character cut in two
        self._carry = b""  # an escape cut in two, likewise

    def feed(self, data: bytes) -> None:
        """Decode the next bytes of the query string or body."""
        if self._carry:
            data, self._carry = self._carry + data, b""
        mask = data.translate(_FIELD_MASK)
        start = 0
        while start != -1:
            separator = mask.find(b"&", start)
            if separator == -1:
                if start < len(data):
                    self._field_bytes(data, start, len(data), complete=False)
                return
            if self._in_field:  # the end of a field an earlier chunk began
                self._field_bytes(data, start, separator, complete=True)
                self._end_field()
            elif start < separator:  # a whole field: the common case, decoded at once
                if len(self._pairs) == self.max_fields:
                    raise ValueError(f"more than {self.max_fields} query fields")
                name, _, value = data[start:separator].partition(b"=")
                self._pairs.append((_field_text(name), _field_text(value)))
            start = mask.find(b"x", separator)  # skips a run of "&" at once

    def finish(self) -> list[tuple[str, str]]:
        """The decoded pairs, once every byte was fed."""
        if self._carry:
            raise ValueError("invalid percent-encoding")
        self._end_field()
        return self._pairs

    def _field_bytes(self, data: bytes, start: int, end: int, *, complete: bool) -> None:
        """``data[start:end]`` belongs to the current field; ``complete``: the field ends
        there."""
        if not self._in_field:
            self._count_field()
            self._in_field = True
        if self._name is None:
            equals = data.find(b"=", start, end)
            if equals != -1:
                self._add(data[start:equals], complete=True)
                self._name = self._text()
                start = equals + 1
        self._add(data[start:end], complete=complete)

    def _count_field(self) -> None:
        if len(self._pairs) == self.max_fields:
            raise ValueError(f"more than {self.max_fields} query fields")

    def _add(self, raw: bytes, *, complete: bool) -> None:
        if not complete:  # a "%" in the last two bytes may go on in the next chunk
            cut = raw.rfind(b"%", max(len(raw) - 2, 0))
            if cut != -1:
                raw, self._carry = raw[:cut], raw[cut:]
        self._parts.append(self._utf8.decode(unescape(raw, plus_is_space=True)))

    def _text(self) -> str:
        self._parts.append(self._utf8.decode(b"", True))  # a character cut short raises
        text = "".join(self._parts)  # (UnicodeDecodeError is a ValueError)
        self._parts = []
        return text

    def _end_field(self) -> None:
        if not self._in_field:
            return
        text = self._text()
        self._pairs.append((text, "") if self._name is None else (self._name, text))
        self._in_field = False
        self._name = None


def _field_text(raw: bytes) -> str:
    if _PERCENT in raw or _PLUS in raw:
        raw = unescape(raw, plus_is_space=True)
    return raw.decode("utf-8")  # UnicodeDecodeError is a ValueError


def parse_query(query: str | bytes, *, max_fields: int = MAX_QUERY_FIELDS) -> list[tuple[str, str]]:
    """Parse ``a=1&b=2`` (a query string, or a form body) into decoded pairs (``+`` is a
    space). Empty pieces are skipped; a key without ``=`` has the value ``""``. More than
    ``max_fields`` pairs, invalid percent-encoding or invalid UTF-8 raise ``ValueError``."""
    raw = query.encode("utf-8") if isinstance(query, str) else query
    decoder = QueryDecoder(max_fields)
    decoder.feed(raw + b"&")  # the "&" ends the last field: every field is decoded whole
    return decoder.finish()


def split_target(target: str) -> tuple[str, str]:
    """Split an origin-form or absolute-form target into ``(raw_path, query)``."""
    if not target.startswith("/"):
        # absolute-form: scheme://authority/path?query
        scheme_end = target.find("://")
        rest = target[scheme_end + 3 :] if scheme_end != -1 else target
        slash = rest.find("/")
        query_mark = rest.find("?")
        if slash == -1 or (query_mark != -1 and query_mark < slash):
            target = "/" + (rest[query_mark:] if query_mark != -1 else "")
        else:
            target = rest[slash:]
    raw_path, _, query = target.partition("?")
    return raw_path, query


class Uri:
    """The request target: ``.path`` (percent-decoded), ``.raw_path`` (as sent, without the
    query), ``.query`` (raw, without ``?``; empty when absent). ``str(uri)`` is the
    origin-form target ``/path?query``."""

    __slots__ = ("_path", "query", "raw_path")

    def __init__(self, raw_path: str, query: str = "") -> None:
        self.raw_path = raw_path
        self.query = query
        self._path: str | None = None

    @classmethod
    def parse(cls, target: str) -> Uri:
        """Build from a request target (origin-form or absolute-form)."""
        if target.startswith("/"):  # origin-form, nearly every request: split here
            raw_path, _, query = target.partition("?")
            return cls(raw_path, query)
        return cls(*split_target(target))

    @property
    def path(self) -> str:
        """The percent-decoded path (``ValueError`` on invalid encoding)."""
        if self._path is None:
            self._path = percent_decode(self.raw_path)
        return self._path

    def __str__(self) -> str:
        return f"{self.raw_path}?{self.query}" if self.query else self.raw_path

    def __repr__(self) -> str:
        return f"Uri({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Uri):
            return str(self) == str(other)
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))
