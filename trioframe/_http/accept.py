"""``Accept``: the client's ``Accept`` header, and which of the media types a handler can write
it prefers (proactive negotiation, RFC 9110 section 12.5.1).

Parsing is one pass over the header, linear in its size and bounded: at most
``MAX_RANGES`` media ranges and ``MAX_PARAMETERS`` parameters per range are read, the rest is
ignored. A malformed entry (a range that is not ``type/subtype``, a weight that is not a
qvalue, a parameter without ``=``) is skipped, never an error: the header belongs to the
client and a bad part of it should not cost it the response.

Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .grammar import TOKEN

__all__ = ["MAX_PARAMETERS", "MAX_RANGES", "Accept", "MediaRange"]

#: Media ranges read from one header (the rest is ignored).
MAX_RANGES = 64
#: Parameters read from one media range (the rest of that range is ignored).
MAX_PARAMETERS = 8

#: ``qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )``
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


class MediaRange:
    """One entry of an ``Accept`` header: ``type``, ``subtype`` (lower case, ``*`` for a
    wildcard), its media type ``parameters`` (names lower case) and its weight ``q``
    (1.0 unless given)."""

    __slots__ = ("parameters", "q", "subtype", "type")

    def __init__(
        self, type: str, subtype: str, parameters: tuple[tuple[str, str], ...], q: float
    ) -> None:
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
        self.q = q

    def __repr__(self) -> str:
        params = "".join(f";{name}={value}" for name, value in self.parameters)
        return f"<MediaRange {self.type}/{self.subtype}{params};q={self.q:g}>"

    def matches(self, type: str, subtype: str, parameters: dict[str, str]) -> bool:
        """Whether this range covers the media type ``type/subtype;parameters``."""
        if self.type != "*" and self.type != type:
            return False
        if self.subtype != "*" and self.subtype != subtype:
            return False
        return all(parameters.get(name) == value for name, value in self.parameters)

    @property
    def specificity(self) -> tuple[int, int, int]:
        """How precisely it names a media type: ``text/html;level=1`` > ``text/html`` >
        ``text/*`` > ``*/*``."""
        return (self.type != "*", self.subtype != "*", len(self.parameters))


class Accept:
    """The ``Accept`` header of a request (an extractor: ``accept: Accept``).

    ``accept.best(["application/json", "text/html"])`` is the media type among those the
    client prefers, ``None`` when it accepts none of them (answer
    ``raise Error.not_acceptable()``, 406). Each offer gets the weight of the most specific
    range that matches it (``text/html;level=1`` before ``text/html`` before ``text/*``
    before ``*/*``); ``q=0`` means "not acceptable"; among offers of equal weight, the first
    one wins (the server's order). Without an ``Accept`` header, or with one in which no
    entry can be read, anything is acceptable: ``best`` returns the first offer. Building it
    and ``best`` never wait and never raise for what the client sent (so no cancellation
    concern)."""

    __slots__ = ("_ranges", "header")

    def __init__(self, header: str | None) -> None:
        #: the header's value as received (several ``Accept`` fields joined with ``", "``),
        #: ``None`` when the request had none
        self.header = header
        self._ranges = parse_accept(header) if header is not None else []

    def __repr__(self) -> str:
        return f"<Accept {self.header!r}>"

    @property
    def ranges(self) -> list[MediaRange]:
        """The media ranges that could be read, in the client's order (at most
        ``MAX_RANGES``)."""
        return list(self._ranges)

    def quality(self, media_type: str) -> float:
        """The weight the client gives ``media_type`` (``0.0``: not acceptable; ``1.0``
        without a usable header). Raises ``ValueError`` when ``media_type`` is not
        ``type/subtype`` (with parameters or not): the offers are the server's own."""
        type, subtype, params = _offer(media_type)
        return self._quality(type, subtype, dict(params))

    def best(self, offers: Sequence[str]) -> str | None:
        """The offer the client prefers (returned as given), ``None`` when none is
        acceptable or ``offers`` is empty. Raises ``ValueError`` for an offer that is not
        ``type/subtype``."""
        parsed = [_offer(offer) for offer in offers]
        if not self._ranges:
            return offers[0] if offers else None
        best: str | None = None
        best_q = 0.0
        for offer, (type, subtype, params) in zip(offers, parsed, strict=True):
            q = self._quality(type, subtype, dict(params))
            if q > best_q:
                best, best_q = offer, q
        return best

    def accepts(self, media_type: str) -> bool:
        """Whether the client accepts ``media_type`` at all (its weight is above 0)."""
        return self.quality(media_type) > 0

    def _quality(self, type: str, subtype: str, params: dict[str, str]) -> float:
        if not self._ranges:
            return 1.0
        chosen: MediaRange | None = None
        for candidate in self._ranges:
            if candidate.matches(type, subtype, params) and (
                chosen is None or candidate.specificity > chosen.specificity
            ):
                chosen = candidate
        return 0.0 if chosen is None else chosen.q


def _offer(media_type: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    parsed = _media_range(media_type, with_weight=False)
    if parsed is None or "*" in (parsed.type, parsed.subtype):
        raise ValueError(f"not a media type: {media_type!r} (expected type/subtype)")
    return parsed.type, parsed.subtype, parsed.parameters


def parse_accept(header: str) -> list[MediaRange]:
    """The readable media ranges of an ``Accept`` value, in order (see the module
    docstring: malformed entries are skipped, at most ``MAX_RANGES`` are read)."""
    ranges: list[MediaRange] = []
    for entry in _split(header, ",", MAX_RANGES * 4):
        parsed = _media_range(entry, with_weight=True)
        if parsed is not None:
            ranges.append(parsed)
            if len(ranges) == MAX_RANGES:
                break
    return ranges


def _media_range(entry: str, *, with_weight: bool) -> MediaRange | None:
    pieces = _split(entry, ";", MAX_PARAMETERS + 2)
    if not pieces:
        return None
    type, slash, subtype = pieces[0].strip().lower().partition("/")
    if not slash or not TOKEN.fullmatch(type) or not TOKEN.fullmatch(subtype):
        return None
    if type == "*" and subtype != "*":
        return None
    params: list[tuple[str, str]] = []
    q = 1.0
    for piece in pieces[1 : MAX_PARAMETERS + 1]:
        name, equals, value = piece.strip().partition("=")
        name = name.rstrip().lower()
        value = value.lstrip()
        if not equals or not TOKEN.fullmatch(name):
            return None
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = _unquote(value[1:-1])
        elif not TOKEN.fullmatch(value):
            return None
        if with_weight and name == "q":  # what follows the weight (accept-ext) is ignored
            if not _QVALUE.fullmatch(value):
                return None
            q = float(value)
            break
        params.append((name, value.lower() if name == "charset" else value))
    return MediaRange(type, subtype, tuple(params), q)


def _unquote(text: str) -> str:
    if "\\" not in text:
        return text
    out, escaped = [], False
    for char in text:
        if escaped or char != "\\":
            out.append(char)
            escaped = False
        else:
            escaped = True
    return "".join(out)


def _split(text: str, separator: str, limit: int) -> list[str]:
    """``text`` split on ``separator`` outside quoted strings, at most ``limit`` pieces (the
    rest is dropped); linear in ``len(text)``."""
    if '"' not in text:
        return text.split(separator, limit)[:limit]
    pieces: list[str] = []
    start = 0
    quoted = escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif quoted:
            if char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == separator:
            pieces.append(text[start:index])
            start = index + 1
            if len(pieces) == limit:
                return pieces
    pieces.append(text[start:])
    return pieces
