"""Request targets: the ``Uri`` value, percent-decoding and query-string parsing.

Sans-I/O and strict: invalid percent-encoding or invalid UTF-8 raise ``ValueError`` for
the caller to turn into a 400.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

__all__ = ["Uri", "parse_query", "percent_decode", "split_target"]

_HEX = frozenset(b"0123456789abcdefABCDEF")
MAX_QUERY_FIELDS = 1000


def percent_decode(text: str, *, plus_is_space: bool = False) -> str:
    """Decode ``%XX`` escapes strictly: a malformed escape or non-UTF-8 result raises
    ``ValueError``."""
    if plus_is_space and "+" in text:
        text = text.replace("+", " ")
    if "%" not in text:
        return text
    raw = text.encode("utf-8")
    i = raw.find(b"%")
    while i != -1:
        if i + 3 > len(raw) or raw[i + 1] not in _HEX or raw[i + 2] not in _HEX:
            raise ValueError(f"invalid percent-encoding in {text!r}")
        i = raw.find(b"%", i + 3)
    return unquote_to_bytes(raw).decode("utf-8")  # UnicodeDecodeError is a ValueError


def parse_query(query: str, *, max_fields: int = MAX_QUERY_FIELDS) -> list[tuple[str, str]]:
    """Parse ``a=1&b=2`` into decoded pairs (``+`` is a space). Empty pieces are skipped;
    a key without ``=`` has the value ``""``. More than ``max_fields`` pairs, invalid
    percent-encoding or invalid UTF-8 raise ``ValueError``."""
    if not query:
        return []
    pairs: list[tuple[str, str]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        if len(pairs) >= max_fields:
            raise ValueError(f"more than {max_fields} query fields")
        name, _, value = piece.partition("=")
        pairs.append(
            (percent_decode(name, plus_is_space=True), percent_decode(value, plus_is_space=True))
        )
    return pairs


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
