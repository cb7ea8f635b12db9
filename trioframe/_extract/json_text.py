"""A JSON body as Python values, by the standard library's decoder, and the check of its
nesting depth: what ``Json[T]`` reads before it structures.

msgspec (the speedups extra) does not read bodies, though it is faster on common ones: its
float parser has a slow path for numbers near a float's limits (``1.5e300``, ``5e-324``,
``1e23``, or ``1`` followed by many zeros) that costs up to 60 times what the standard
library spends, so a 256 KiB body of them would hold the event loop for a third of a second
(``tests/test_event_loop_blocking.py``)."""

from __future__ import annotations

import gc
import itertools
import json
import operator
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "decode_json_by_stdlib",
    "deeper_than_allowed",
    "json_depth",
    "parse_json",
    "reject_constant",
]

#: JSON nested deeper than this is refused with 400.
MAX_JSON_DEPTH = 100
# What json_depth keeps of a document: quotes and brackets, "{}" folded into "[]".
_FOLD_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


def reject_constant(name: str) -> Any:
    """The decoder's ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise ValueError(f"{name} is not allowed in JSON")


#: One decoder for every body: ``json.loads(body, parse_constant=...)`` would build a new one
#: per call (about 14k instructions of a typed JSON request).
_DECODER = json.JSONDecoder(parse_constant=reject_constant)
#: Bodies this large and larger are parsed with the garbage collector paused (``parse_json``).
_PAUSE_FROM = 1024
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def json_depth(document: bytes) -> int:
    """The deepest nesting of arrays and objects in ``document``, which must be valid JSON
    (brackets inside strings do not count). On invalid JSON the count means nothing."""
    # Every step is a C-speed ``bytes`` method or iterator: a few passes over the bytes, plus
    # work per escape, string and bracket, each of which costs ``json.loads`` more than it
    # costs here.
    if b"\\" in document:  # drop escaped backslashes, then escaped quotes
        document = document.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = document.translate(_FOLD_BRACKETS, _NOT_STRUCTURE)
    if b'"' in kept:  # what lies between a pair of quotes is inside a string
        kept = b"".join(kept.replace(b'""', b"").split(b'"')[::2])
    depth = 0
    if b"[]" in kept:  # the deepest points are all "[]": drop that innermost level at once
        kept = kept.replace(b"[]", b"")
        depth = 1
    # The depth just before the n-th "]" is the number of "[" before it, minus n.
    opened = itertools.accumulate(map(len, kept.split(b"]")))
    deepest: int = max(map(operator.sub, opened, itertools.count()))
    return depth + deepest


def parse_json(body: bytes) -> Any:
    """``json.loads`` (``decode_json_by_stdlib``) with the cyclic garbage collector paused. A body of many small arrays or
    objects allocates a container each, and on a small heap every few thousand of them set
    off a collection of the whole heap: measured, 130 ms of one event-loop step for a 256 KiB
    body of nested arrays, 21 ms with collection paused. It resumes right after the parse (a
    parsed JSON value holds no reference cycles). A body under ``_PAUSE_FROM`` bytes holds
    too few containers to set off more than the collections any code might."""
    if len(body) < _PAUSE_FROM:
        return decode_json_by_stdlib(body)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return decode_json_by_stdlib(body)
    finally:
        if enabled:
            gc.enable()


def decode_json_by_stdlib(body: bytes) -> Any:
    """What ``json.loads(body, parse_constant=reject_constant)`` returns or raises, by the
    standard library's decoder.

    json.loads takes the encoding from the first bytes (UTF-8, -16 or -32, a UTF-8 BOM
    dropped), then runs the decoder. A body that opens an object or an array and whose second
    byte is not NUL is UTF-8 by that rule, read without asking; when the value fills the whole
    text, the decoder's checks around the scan agree."""
    first = body[:1]
    if (first == b"{" or first == b"[") and body[1:2] != b"\0":
        text = body.decode("utf-8", "surrogatepass")
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
        return _DECODER.decode(text)
    return _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))


def deeper_than_allowed(document: bytes) -> bool:
    """Whether the valid JSON ``document`` nests deeper than ``MAX_JSON_DEPTH``."""
    # Nesting needs an opening bracket per level, and each "[" or "{" of any encoding JSON
    # reads holds its byte: a document with no more of those bytes than the limit is within it.
    if document.count(b"[") + document.count(b"{") <= MAX_JSON_DEPTH:
        return False
    encoding = json.detect_encoding(document)  # json.loads also reads UTF-16 and UTF-32
    if encoding not in ("utf-8", "utf-8-sig"):
        document = document.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
    return json_depth(document) > MAX_JSON_DEPTH
