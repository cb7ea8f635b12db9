"""Writers generated once per attrs class: an instance as the bytes ``encode_json`` writes,
each held to the encoder it shortcuts.

``writer(kind)`` returns a function that checks an instance value by value (one exact type
check per value) and writes it, or raises (any exception) as soon as a value is one it does
not write exactly as the standard library's encoder and the converter would; ``encode_json``
then runs that path, which writes what it always wrote, or fails as it always failed. A class
with a field of a kind not handled here gets ``None``: the encoder serves it.

Two kinds of writer. With msgspec installed (the ``speedups`` extra), the checks run first and
msgspec writes a dictionary of the instance's fields in their order: only values it writes
byte for byte as the encoder does get through (a datetime or a time with a fixed UTC offset of whole minutes, not zero, or none; a
float in ``[1e-4, 1e16)`` or zero; strings and ints of their exact type; enums that are not
flags). Without it, or for a class with a field msgspec would write otherwise, the checks and
the text are one function: the text in one f-string, encoded.

Written: ``int``, ``str``, ``bool``, finite ``float``, ``X | None``, ``list[X]``, nested attrs
classes, ``Decimal``, ``UUID``, dates, datetimes, times, and enums whose values are strings or
ints.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import typing
import uuid
from collections.abc import Callable
from typing import Any

import attrs

from . import msgspec_json
from .generated import NotHandled, Source, escape, fields_of_record, optional_member

__all__ = ["make_checked_writer", "make_text_writer", "writer"]

_WRITERS: dict[Any, Callable[[Any], bytes] | None] = {}


def writer(kind: Any) -> Callable[[Any], bytes] | None:
    """The generated writer of the attrs class ``kind``, or ``None``; made once per class."""
    try:
        return _WRITERS[kind]
    except KeyError:
        pass
    _WRITERS[kind] = None  # a class that holds itself is left to the encoder
    made = None
    if msgspec_json.encode is not None:
        made = _or_none(make_checked_writer, kind, msgspec_json.encode)
    _WRITERS[kind] = made or _or_none(make_text_writer, kind)
    return _WRITERS[kind]


def _or_none(make: Callable[..., Any], *args: Any) -> Any:
    try:
        return make(*args)
    except Exception:  # not handled here, or not at all: the encoder says which
        return None


# -- checks, then msgspec ---------------------------------------------------------------------
_PLAIN: dict[Any, Callable[[Any], dict[str, Any]] | None] = {}
#: Fixed-offset time zones whose offset msgspec writes as ``isoformat`` does (``timezone``
#: instances are equal, and hash alike, when their offsets are).
_ZONES: set[datetime.tzinfo] = set()
_EXACT = (str, int, bool, decimal.Decimal, uuid.UUID, datetime.date)


def make_checked_writer(kind: Any, encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """The writer that checks an instance of ``kind``, then has ``encode`` write it as a
    dictionary of its fields in their order (msgspec writes an attrs instance's fields
    sorted by name)."""
    src = Source()
    src.lines.append("def write(o):")
    plain = _record(src, kind, "o", "    ", ())
    src.lines.append(f"    return {src.name(encode)}({plain})")
    made: Callable[[Any], bytes] = src.compile("write")
    return made


def _plain_record(kind: Any) -> Callable[[Any], dict[str, Any]] | None:
    """The checks of the attrs class ``kind`` returning its dictionary (for a list's
    records), or ``None``."""
    if kind not in _PLAIN:
        _PLAIN[kind] = None  # a class that holds itself is left to the encoder
        _PLAIN[kind] = _or_none(_compile_plain, kind)
    return _PLAIN[kind]


def _compile_plain(kind: Any) -> Callable[[Any], dict[str, Any]]:
    src = Source()
    src.lines.append("def plain(o):")
    src.lines.append(f"    return {_record(src, kind, 'o', '    ', ())}")
    made: Callable[[Any], dict[str, Any]] = src.compile("plain")
    return made


def _record(src: Source, kind: Any, value: str, indent: str, within: tuple[Any, ...]) -> str:
    """Add the checks of the record ``value`` and return the expression of its dictionary;
    the records it holds (not in a list) are checked in place. ``within``: the records whose
    checks these lines are in."""
    if kind in within:  # holds itself
        raise NotHandled
    src.lines.append(f"{indent}if type({value}) is not {src.name(kind)}: raise Slow")
    items = []
    for field in fields_of_record(kind):
        inner = src.local("_value")
        src.lines.append(f"{indent}{inner} = {value}.{field.name}")
        items.append(f"{field.name!r}: {_plain(src, field.type, inner, indent, (*within, kind))}")
    return "{" + ", ".join(items) + "}"


def _plain(src: Source, kind: Any, value: str, indent: str, within: tuple[Any, ...]) -> str:
    """Add the lines that raise unless msgspec writes ``value`` (declared ``kind``) as the
    encoder does, and return the expression msgspec is given for it. ``within`` is empty in
    a list's loop (the checks run once per item there)."""
    out = src.lines.append
    exact = f"{indent}if type({value}) is not {src.name(kind)}: raise Slow"
    if kind in _EXACT:  # a subclass goes to the encoder (msgspec refuses most)
        out(exact)
    elif kind is float:  # msgspec writes 1e+16 as 1e16, and nan and the infinities as null
        out(exact)
        out(f"{indent}if not (1e-4 <= {value} < 1e16 or -1e16 < {value} <= -1e-4")
        out(f"{indent}        or {value} == 0): raise Slow")
    elif kind in (datetime.datetime, datetime.time):  # msgspec writes "+00:00" as "Z"
        zone = src.local("_zone")
        out(exact)
        out(f"{indent}{zone} = {value}.tzinfo")
        out(f"{indent}if {zone} is not None and not ({zone} in {src.name(_ZONES)}")
        out(f"{indent}        and type({zone}) is {src.name(datetime.timezone)}")
        out(f"{indent}        or {src.name(_learn_zone)}({zone})): raise Slow")
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        if issubclass(kind, enum.Flag) or not all(type(m.value) in (str, int) for m in kind):
            raise NotHandled  # a flag's combinations are of its type too
        out(exact)
    elif (member := optional_member(kind)) is not None:
        inner = src.under(
            f"{indent}if {value} is not None:",
            lambda: _plain(src, member, value, indent + "    ", within),
        )
        return value if inner == value else f"(None if {value} is None else {inner})"
    elif typing.get_origin(kind) is list and len(typing.get_args(kind)) == 1:
        item, (item_kind,) = src.local("_item"), typing.get_args(kind)
        out(f"{indent}if type({value}) is not list: raise Slow")
        inner = src.under(
            f"{indent}for {item} in {value}:",
            lambda: _plain(src, item_kind, item, indent + "    ", ()),
        )
        return value if inner == item else f"[{inner} for {item} in {value}]"
    elif isinstance(kind, type) and attrs.has(kind) and within:
        return _record(src, kind, value, indent, within)
    elif isinstance(kind, type) and attrs.has(kind):
        nested = _plain_record(kind)
        if nested is None:
            raise NotHandled
        return f"{src.name(nested)}({value})"
    else:
        raise NotHandled
    return value


def _learn_zone(zone: datetime.tzinfo) -> bool:
    """Whether msgspec writes ``zone``'s offset as ``isoformat`` does: a ``timezone`` whose
    offset is whole minutes and not zero (``isoformat`` writes seconds; msgspec drops them)."""
    if type(zone) is not datetime.timezone:
        return False
    offset = zone.utcoffset(None)
    if not offset or offset.seconds % 60 or offset.microseconds:
        return False
    _ZONES.add(zone)
    return True


# -- checks and text in one f-string ----------------------------------------------------------
_TEXT_WRITERS: dict[Any, Callable[[Any], str] | None] = {}
#: Types written as a quoted text of digits, signs, letters, '.' and ':' (nothing the encoder
#: would escape): how to get that text from the value ``{v}``.
_QUOTED_TEXT = {
    decimal.Decimal: "{v}.__str__()",
    datetime.datetime: "{v}.isoformat()",
    datetime.date: "{v}.isoformat()",
    datetime.time: "{v}.isoformat()",
}


def _written(src: Source, kind: Any, value: str, indent: str) -> str:
    """Add the lines that check ``value`` (declared ``kind``) and return an expression for its
    JSON text (no backslash, no single quote: it goes into an f-string)."""
    expression, quoted = _text_of(src, kind, value, indent)
    if quoted:
        quote = src.name('"')
        return f"{quote} + {expression} + {quote}"
    return expression


def _text_of(src: Source, kind: Any, value: str, indent: str) -> tuple[str, bool]:
    """``_written``'s expression, and whether it is yet to be put in double quotes."""
    out = src.lines.append
    if kind is str:  # the escaper refuses anything else, and writes a str subclass as str
        return f"{src.name(escape)}({value})", False
    if kind in (int, bool, float, uuid.UUID) or kind in _QUOTED_TEXT:
        out(f"{indent}if type({value}) is not {src.name(kind)}: raise Slow")
        if kind is bool:
            return f'("true" if {value} else "false")', False
        if kind is float:
            out(f"{indent}if {value} - {value} != 0: raise Slow")  # inf and nan: the encoder's
        if kind in (int, float):  # formatted as its exact type's repr
            return value, False
        if kind is uuid.UUID:  # str(value), without the call: 8-4-4-4-12 hexadecimal digits
            digits = src.local("_digits")
            out(f"{indent}{digits} = '%032x' % {value}.int")
            cuts = ["[:8]", "[8:12]", "[12:16]", "[16:20]", "[20:]"]
            return ' + "-" + '.join(digits + cut for cut in cuts), True
        return _QUOTED_TEXT[kind].format(v=value), True
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        out(f"{indent}if type({value}) is not {src.name(kind)}: raise Slow")
        return f"{src.name(_member_texts(kind))}[{value}]", False
    if (member := optional_member(kind)) is not None:
        inner = _guarded(src, f"{indent}if {value} is not None:", member, value, indent)
        return f'("null" if {value} is None else {inner})', False
    if typing.get_origin(kind) is list and len(typing.get_args(kind)) == 1:
        item = src.local("_item")
        out(f"{indent}if type({value}) is not list: raise Slow")
        member = typing.get_args(kind)[0]
        inner = _guarded(src, f"{indent}for {item} in {value}:", member, item, indent)
        return f'"[" + ",".join([{inner} for {item} in {value}]) + "]"', False
    if isinstance(kind, type) and attrs.has(kind):
        nested = _text_writer(kind)
        if nested is None:
            raise NotHandled
        return f"{src.name(nested)}({value})", False
    raise NotHandled


def _guarded(src: Source, head: str, kind: Any, value: str, indent: str) -> str:
    """``_written`` with its checks in the block opened by ``head`` (none: no block)."""
    start = len(src.lines)
    src.lines.append(head)
    expression = _written(src, kind, value, indent + "    ")
    if len(src.lines) == start + 1:
        del src.lines[start]
    return expression


def _member_texts(kind: type[enum.Enum]) -> dict[enum.Enum, str]:
    """How the encoder writes each member's value (a string or an int here)."""
    texts = {}
    for member in kind:
        if type(member.value) is str:
            texts[member] = escape(member.value)
        elif type(member.value) is int:
            texts[member] = repr(member.value)
        else:
            raise NotHandled
    return texts


def make_text_writer(kind: Any) -> Callable[[Any], bytes]:
    """The writer that checks an instance of ``kind`` and writes its text in one f-string."""
    made: Callable[[Any], bytes] = _compile_text(kind, ".encode()")
    return made


def _text_writer(kind: Any) -> Callable[[Any], str] | None:
    """``make_text_writer``'s text before encoding (a list's records), or ``None``."""
    if kind not in _TEXT_WRITERS:
        _TEXT_WRITERS[kind] = None  # a class that holds itself is left to the encoder
        _TEXT_WRITERS[kind] = _or_none(_compile_text, kind, "")
    return _TEXT_WRITERS[kind]


def _compile_text(kind: Any, then: str) -> Callable[[Any], Any]:
    src = Source()
    src.lines.append("def write(o):")
    pieces = _object_pieces(src, kind, "o")
    src.lines.append("    return f'" + "".join(pieces) + "'" + then)
    return src.compile("write")


def _object_pieces(src: Source, kind: Any, value: str) -> list[str]:
    """Check the record ``value`` of class ``kind`` and return the pieces of an f-string
    writing it; the fields that are records themselves are written in the same string."""
    src.lines.append(f"    if type({value}) is not {src.name(kind)}: raise Slow")
    pieces = []
    for number, field in enumerate(fields_of_record(kind)):
        inner = src.local("_value")
        src.lines.append(f"    {inner} = {value}.{field.name}")
        pieces.append(("{{" if number == 0 else ",") + escape(field.name) + ":")
        if isinstance(field.type, type) and attrs.has(field.type):
            if _text_writer(field.type) is None:  # holds itself, or cannot be written here
                raise NotHandled
            pieces += _object_pieces(src, field.type, inner)
            continue
        expression, quoted = _text_of(src, field.type, inner, "    ")
        quote = '"' if quoted else ""
        pieces.append(f"{quote}{{{expression}}}{quote}")
    pieces.append("}}" if pieces else "{{}}")
    return pieces
