"""Functions generated once per attrs class for the success path of ``Json[T]`` and of writing
a record as JSON, each held to the cattrs path it shortcuts.

``structurer(kind)`` reads a parsed JSON object into ``kind`` the way ``JSON_CONVERTER``
does, and ``writer(kind)`` writes an instance as the text ``encode_json`` writes, both as
straight-line code: one exact type check per value and no call per field where the type
allows it. Each raises (any exception) as soon as a value is not one it handles exactly as
the cattrs path would; the caller then runs the cattrs path, which gives the value, or the
error, that it always gave. So an unusual value costs a second attempt, never a different
answer. A class with a field of a kind not handled here (a converter, a field left out of
``__init__``, a private name, a type outside the list below) or that holds itself gets
``None``: the cattrs path serves it.

Read: ``int``, ``str``, ``bool`` inline; ``X | None``; ``list[X]``; nested attrs classes;
enums and ``Literal``s from their table of choices; datetimes, dates, times and UUIDs by
their parser; every other type through the converter's own hook for it, looked up once. Written: ``int``,
``str``, ``bool``, finite ``float``, ``X | None``, ``list[X]``, nested attrs classes,
``Decimal``, ``UUID``, dates, datetimes, times, and enums whose values are strings or ints.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import itertools
import json
import types
import typing
import uuid
from collections.abc import Callable
from typing import Any

import attrs
import cattrs

from .convert import STRING_VALUES
from .values import Choices

__all__ = ["structurer", "writer"]

_escape: Callable[[str], str] = json.encoder.encode_basestring
_names = itertools.count()


class _NotHandled(Exception):
    """The type has no generated path (raised while generating, never per request)."""


class _Slow(Exception):
    """A value the generated function does not handle: the cattrs path takes it."""


def _fields(kind: Any) -> list[attrs.Attribute[Any]]:
    """The fields of an attrs class, types resolved, when each is read and written by its
    name and is a plain ``__init__`` argument; otherwise ``_NotHandled``."""
    if not (isinstance(kind, type) and attrs.has(kind)) or callable(getattr(kind, "to_dict", 0)):
        raise _NotHandled
    fields = attrs.fields(attrs.resolve_types(kind))
    for field in fields:
        if (
            not field.init
            or field.alias != field.name
            or field.converter is not None
            or field.type is None
        ):
            raise _NotHandled
    return list(fields)


def _optional_member(kind: Any) -> Any:
    """``X`` for ``X | None`` (``Optional[X]``), else ``None``."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return None
    members = [m for m in typing.get_args(kind) if m is not type(None)]
    return members[0] if len(members) == 1 and len(typing.get_args(kind)) == 2 else None


class _Source:
    """The lines and the names of one generated function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"_Slow": _Slow}

    def name(self, value: Any) -> str:
        """A global of the function, bound to ``value``."""
        name = f"_v{next(_names)}"
        self.names[name] = value
        return name

    @staticmethod
    def local(prefix: str) -> str:
        """A local variable name no other part of the function uses."""
        return f"{prefix}{next(_names)}"

    def compile(self, function: str) -> Callable[..., Any]:
        code = "\n".join(self.lines)
        exec(compile(code, f"<trioframe generated {function}>", "exec"), self.names)
        made: Callable[..., Any] = self.names[function]
        return made


# -- reading --------------------------------------------------------------------------------
_STRUCTURERS: dict[Any, Callable[[Any], Any] | None] = {}
_INLINE_READS = {int: "int", str: "str", bool: "bool"}
_STRING_PARSERS = {kind: parse for kind, parse, _ in STRING_VALUES}


def structurer(kind: Any, converter: cattrs.Converter) -> Callable[[Any], Any] | None:
    """The generated reader of the attrs class ``kind`` for the JSON ``converter``, or
    ``None``; made once per class."""
    if not (isinstance(kind, type) and attrs.has(kind)):
        return None
    if kind not in _STRUCTURERS:
        _STRUCTURERS[kind] = None  # a class that holds itself is left to cattrs
        try:
            _STRUCTURERS[kind] = _make_structurer(kind, converter)
        except Exception:  # not handled here, or not at all: the cattrs path says which
            _STRUCTURERS[kind] = None
    return _STRUCTURERS[kind]


def _read(src: _Source, kind: Any, value: str, indent: str, conv: Any, flat: bool = True) -> str:
    """Add the lines that check ``value`` for ``kind`` and return the expression of what it
    reads as; ``flat`` when the expression is evaluated once, after the lines (not once per
    item of a list): a record is then read in place."""
    out = src.lines.append
    if kind in _INLINE_READS:
        out(f"{indent}if type({value}) is not {_INLINE_READS[kind]}: raise _Slow")
        return value
    member = _optional_member(kind)
    if member is not None:
        start = len(src.lines)
        out(f"{indent}if {value} is not None:")
        inner = _read(src, member, value, indent + "    ", conv, flat)
        if len(src.lines) == start + 1:
            del src.lines[start]
        return value if inner == value else f"(None if {value} is None else {inner})"
    if typing.get_origin(kind) is list and len(typing.get_args(kind)) == 1:
        item = src.local("_item")
        out(f"{indent}if type({value}) is not list: raise _Slow")
        start = len(src.lines)
        out(f"{indent}for {item} in {value}:")
        inner = _read(src, typing.get_args(kind)[0], item, indent + "    ", conv, flat=False)
        if len(src.lines) == start + 1:
            del src.lines[start]
        return f"list({value})" if inner == item else f"[{inner} for {item} in {value}]"
    if isinstance(kind, type) and attrs.has(kind):
        nested = structurer(kind, conv)
        if nested is None:
            raise _NotHandled
        fields = _fields(kind)
        if not flat or any(field.default is not attrs.NOTHING for field in fields):
            return f"{src.name(nested)}({value})"
        # read in place: the same checks and the same constructor call, one call less
        out(f"{indent}if type({value}) is not dict: raise _Slow")
        arguments = []
        for field in fields:
            inner = src.local("_value")
            out(f"{indent}{inner} = {value}[{field.name!r}]")
            arguments.append(f"{field.name}={_read(src, field.type, inner, indent, conv)}")
        return f"{src.name(kind)}({', '.join(arguments)})"
    hook = conv.get_structure_hook(kind)
    if hook == conv._structure_call:
        raise _NotHandled
    if getattr(hook, "__func__", None) is Choices.from_json:  # an enum or a Literal
        return f"{src.name(hook.__self__.by_json)}[type({value}), {value}]"
    if kind in _STRING_PARSERS:  # the hook checks for a string and parses it: so here
        out(f"{indent}if type({value}) is not str: raise _Slow")
        return f"{src.name(_STRING_PARSERS[kind])}({value})"
    return f"{src.name(hook)}({value}, {src.name(kind)})"


def _make_structurer(kind: Any, conv: cattrs.Converter) -> Callable[[Any], Any]:
    src = _Source()
    src.lines += ["def structure(o):", "    if type(o) is not dict: raise _Slow", "    kw = {}"]
    arguments = []
    fields = _fields(kind)
    if all(field.default is attrs.NOTHING for field in fields):
        del src.lines[-1]  # no keyword arguments that depend on the object
    for field in fields:
        value = src.local("_value")
        if field.default is attrs.NOTHING:
            src.lines.append(f"    {value} = o[{field.name!r}]")
            arguments.append(f"{field.name}={_read(src, field.type, value, '    ', conv)}")
        else:
            src.lines.append(f"    if {field.name!r} in o:")
            src.lines.append(f"        {value} = o[{field.name!r}]")
            read = _read(src, field.type, value, "        ", conv)
            src.lines.append(f"        kw[{field.name!r}] = {read}")
    if "    kw = {}" in src.lines:
        arguments.append("**kw")
    src.lines.append(f"    return {src.name(kind)}({', '.join(arguments)})")
    return src.compile("structure")


# -- writing --------------------------------------------------------------------------------
_WRITERS: dict[Any, Callable[[Any], str] | None] = {}
#: Types written as a quoted text of digits, signs, letters, '.' and ':' (nothing the encoder
#: would escape): how to get that text from the value ``{v}``.
_QUOTED_TEXT = {
    decimal.Decimal: "{v}.__str__()",
    datetime.datetime: "{v}.isoformat()",
    datetime.date: "{v}.isoformat()",
    datetime.time: "{v}.isoformat()",
}


def writer(kind: Any) -> Callable[[Any], str] | None:
    """The generated writer of the attrs class ``kind``, or ``None``; made once per class."""
    try:
        return _WRITERS[kind]
    except KeyError:
        pass
    _WRITERS[kind] = None  # a class that holds itself is left to cattrs
    try:
        _WRITERS[kind] = _make_writer(kind)
    except Exception:  # not handled here, or not at all: the cattrs path says which
        _WRITERS[kind] = None
    return _WRITERS[kind]


def _written(src: _Source, kind: Any, value: str, indent: str) -> str:
    """Add the lines that check ``value`` (declared ``kind``) and return an expression for its
    JSON text (no backslash, no single quote: it goes into an f-string)."""
    expression, quoted = _text_of(src, kind, value, indent)
    if quoted:
        quote = src.name('"')
        return f"{quote} + {expression} + {quote}"
    return expression


def _text_of(src: _Source, kind: Any, value: str, indent: str) -> tuple[str, bool]:
    """``_written``'s expression, and whether it is yet to be put in double quotes."""
    out = src.lines.append
    if kind is str:  # the escaper refuses anything else, and writes a str subclass as str
        return f"{src.name(_escape)}({value})", False
    if kind in (int, bool, float, uuid.UUID) or kind in _QUOTED_TEXT:
        out(f"{indent}if type({value}) is not {src.name(kind)}: raise _Slow")
        if kind is bool:
            return f'("true" if {value} else "false")', False
        if kind is float:
            out(f"{indent}if {value} - {value} != 0: raise _Slow")  # inf and nan: the encoder's
        if kind in (int, float):  # formatted as its exact type's repr
            return value, False
        if kind is uuid.UUID:  # str(value), without the call: 8-4-4-4-12 hexadecimal digits
            digits = src.local("_digits")
            out(f"{indent}{digits} = '%032x' % {value}.int")
            cuts = ["[:8]", "[8:12]", "[12:16]", "[16:20]", "[20:]"]
            return ' + "-" + '.join(digits + cut for cut in cuts), True
        return _QUOTED_TEXT[kind].format(v=value), True
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        out(f"{indent}if type({value}) is not {src.name(kind)}: raise _Slow")
        return f"{src.name(_member_texts(kind))}[{value}]", False
    if (member := _optional_member(kind)) is not None:
        inner = _guarded(src, f"{indent}if {value} is not None:", member, value, indent)
        return f'("null" if {value} is None else {inner})', False
    if typing.get_origin(kind) is list and len(typing.get_args(kind)) == 1:
        item = src.local("_item")
        out(f"{indent}if type({value}) is not list: raise _Slow")
        member = typing.get_args(kind)[0]
        inner = _guarded(src, f"{indent}for {item} in {value}:", member, item, indent)
        return f'"[" + ",".join([{inner} for {item} in {value}]) + "]"', False
    if isinstance(kind, type) and attrs.has(kind):
        nested = writer(kind)
        if nested is None:
            raise _NotHandled
        return f"{src.name(nested)}({value})", False
    raise _NotHandled


def _guarded(src: _Source, head: str, kind: Any, value: str, indent: str) -> str:
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
            texts[member] = _escape(member.value)
        elif type(member.value) is int:
            texts[member] = repr(member.value)
        else:
            raise _NotHandled
    return texts


def _make_writer(kind: Any) -> Callable[[Any], str]:
    src = _Source()
    src.lines.append("def write(o):")
    pieces = _object_pieces(src, kind, "o")
    src.lines.append("    return f'" + "".join(pieces) + "'")
    return src.compile("write")


def _object_pieces(src: _Source, kind: Any, value: str) -> list[str]:
    """Check the record ``value`` of class ``kind`` and return the pieces of an f-string
    writing it; the fields that are records themselves are written in the same string."""
    src.lines.append(f"    if type({value}) is not {src.name(kind)}: raise _Slow")
    pieces = []
    for number, field in enumerate(_fields(kind)):
        inner = src.local("_value")
        src.lines.append(f"    {inner} = {value}.{field.name}")
        pieces.append(("{{" if number == 0 else ",") + _escape(field.name) + ":")
        if isinstance(field.type, type) and attrs.has(field.type):
            if writer(field.type) is None:  # holds itself, or cannot be written here
                raise _NotHandled
            pieces += _object_pieces(src, field.type, inner)
            continue
        expression, quoted = _text_of(src, field.type, inner, "    ")
        quote = '"' if quoted else ""
        pieces.append(f"{quote}{{{expression}}}{quote}")
    pieces.append("}}" if pieces else "{{}}")
    return pieces
