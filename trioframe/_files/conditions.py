"""Validators and conditional requests for a file (RFC 9110 sections 8.8 and 13).

A file's validators are its ``ETag`` (strong: the size and the modification time in
nanoseconds, so any change to the file changes it) and its ``Last-Modified`` date.
``evaluate`` applies the request's preconditions in the order of RFC 9110 section 13.2.2:

1. ``If-Match`` (strong comparison, ``*`` matches any current file): no match is 412;
2. else ``If-Unmodified-Since``: modified after the date is 412;
3. ``If-None-Match`` (weak comparison, ``*``): a match is 304 for GET and HEAD, 412 otherwise;
4. else ``If-Modified-Since`` (GET and HEAD only): not modified since the date is 304.

A date that does not parse is ignored, as the RFC asks. ``range_applies`` then reads
``If-Range``: a Range is honoured only when ``If-Range`` is absent or names the current file
exactly (a strong ETag match, or the exact ``Last-Modified`` date); otherwise the whole file
is sent.
"""

from __future__ import annotations

import email.utils
import re
from typing import Protocol

__all__ = ["HeaderLookup", "Validators", "evaluate", "http_date_of", "range_applies"]


class HeaderLookup(Protocol):
    """What is read from the request: the first value of a (lower-case) header, or ``None``
    (``Headers`` is one)."""

    def get(self, name: str) -> str | None: ...


# An entity-tag (RFC 9110 8.8.3): an optional W/ and a quoted opaque part without DQUOTE.
_ENTITY_TAG = re.compile(r'[ \t]*(W/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|$)')


class Validators:
    """The ``ETag`` and ``Last-Modified`` of a file of ``size`` bytes last modified at
    ``mtime_ns`` (nanoseconds since the epoch)."""

    __slots__ = ("etag", "last_modified", "modified_second")

    def __init__(self, size: int, mtime_ns: int) -> None:
        #: the strong entity-tag, quotes included
        self.etag = f'"{size:x}-{mtime_ns:x}"'
        #: the modification time in whole seconds (HTTP dates have no fraction)
        self.modified_second = mtime_ns // 1_000_000_000
        #: the ``Last-Modified`` value
        self.last_modified = http_date_of(self.modified_second)


def http_date_of(seconds: int) -> str:
    """``seconds`` since the epoch as an IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``)."""
    return email.utils.formatdate(seconds, usegmt=True)


def _date(value: str | None) -> int | None:
    """An HTTP-date as seconds since the epoch; ``None`` when absent or invalid."""
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:  # RFC 9110 5.6.7: HTTP dates are GMT
        return None
    return int(parsed.timestamp())


def _tags(value: str) -> list[tuple[bool, str]] | None:
    """The ``(weak, opaque)`` entity-tags of a list; ``None`` when it does not parse (then
    the header is ignored). ``*`` is handled by the callers."""
    tags: list[tuple[bool, str]] = []
    position, end = 0, len(value)
    while position < end:
        match = _ENTITY_TAG.match(value, position)
        if match is None:
            return None
        tags.append((match.group(1) is not None, match.group(2)))
        position = match.end()
    return tags


def _opaque(etag: str) -> str:
    return etag[1:-1]


def _matches(value: str, etag: str, *, strong: bool) -> bool:
    """Whether the ``If-Match``/``If-None-Match`` list ``value`` names ``etag`` (``*`` names
    any current file). A list that does not parse names nothing."""
    if value.strip(" \t") == "*":
        return True
    tags = _tags(value)
    if not tags:
        return False
    opaque = _opaque(etag)
    return any(tag == opaque and not (strong and weak) for weak, tag in tags)


def evaluate(method: str, headers: HeaderLookup, validators: Validators) -> int | None:
    """The status the preconditions in ``headers`` (lower-case names) call for, 412 or 304,
    or ``None`` to go on with the request."""
    if_match = headers.get("if-match")
    if if_match is not None:
        if not _matches(if_match, validators.etag, strong=True):
            return 412
    else:
        since = _date(headers.get("if-unmodified-since"))
        if since is not None and validators.modified_second > since:
            return 412
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None:
        if _matches(if_none_match, validators.etag, strong=False):
            return 304 if method in ("GET", "HEAD") else 412
    elif method in ("GET", "HEAD"):
        since = _date(headers.get("if-modified-since"))
        if since is not None and validators.modified_second <= since:
            return 304
    return None


def range_applies(headers: HeaderLookup, validators: Validators) -> bool:
    """Whether a ``Range`` may be honoured: no ``If-Range``, or one naming the current file
    (a strong entity-tag equal to the ETag, or exactly the ``Last-Modified`` date)."""
    value = headers.get("if-range")
    if value is None:
        return True
    value = value.strip(" \t")
    if value.startswith(('"', "W/")):
        tags = _tags(value)
        return tags is not None and tags == [(False, _opaque(validators.etag))]
    return _date(value) == validators.modified_second
