"""Readers generated once per attrs class for the success path of ``Json[T]``, each held to the
cattrs path it shortcuts; the parts of a generated function that ``writers`` shares.

``structurer(kind)`` reads a parsed JSON object into ``kind`` the way ``JSON_CONVERTER``
does, as straight-line code: one exact type check per value and no call per field where the
type allows it. It raises (any exception) as soon as a value is not one it handles exactly as
the cattrs path would; the caller then runs the cattrs path, which gives the value, or the
error, that it always gave. So an unusual value costs a second attempt, never a different
answer. A class with a field of a kind not handled here (a converter, a field left out of
``__init__``, a private name, a type outside the list below) or that holds itself gets
``None``: the cattrs path serves it.

Read: ``int``, ``str``, ``bool`` inline; ``X | None``; ``list[X]``; nested attrs classes;
enums and ``Literal``s from their table of choices; datetimes, dates, times and UUIDs by
their parser; every other type through the converter's own hook for it, looked up once.
"""

from __future__ import annotations

import itertools
import json
import types
import typing
from collections.abc import Callable
from typing import Any

import attrs
import cattrs

from .convert import STRING_VALUES
from .values import Choices

__all__ = [
    "NotHandled",
    "Slow",
    "Source",
    "escape",
    "fields_of_record",
    "optional_member",
    "structurer",
]

escape: Callable[[str], str] = json.encoder.encode_basestring
_names = itertools.count()


class NotHandled(Exception):
    """The type has no generated path (raised while generating, never per request)."""


class Slow(Exception):
    """A value the generated function does not handle: the cattrs path takes it."""


def fields_of_record(kind: Any) -> list[attrs.Attribute[Any]]:
    """The fields of an attrs class, types resolved, when each is read and written by its
    name and is a plain ``__init__`` argument; otherwise ``NotHandled``."""
    if not (isinstance(kind, type) and attrs.has(kind)) or callable(getattr(kind, "to_dict", 0)):
        raise NotHandled
    fields = attrs.fields(attrs.resolve_types(kind))
    for field in fields:
        if (
            not field.init
            or field.alias != field.name
            or field.converter is not None
            or field.type is None
        ):
            raise NotHandled
    return list(fields)


def optional_member(kind: Any) -> Any:
    """``X`` for ``X | None`` (``Optional[X]``), else ``None``."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return None
    members = [m for m in typing.get_args(kind) if m is not type(None)]
    return members[0] if len(members) == 1 and len(typing.get_args(kind)) == 2 else None


class Source:
    """The lines and the names of one generated function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"Slow": Slow}

    def name(self, value: Any) -> str:
        """A global of the function, bound to ``value``."""
        name = f"_v{next(_names)}"
        self.names[name] = value
        return name

    @staticmethod
    def local(prefix: str) -> str:
        """A local variable name no other part of the function uses."""
        return f"{prefix}{next(_names)}"

    def under(self, header: str, body: Callable[[], str]) -> str:
        """Add ``header`` (an ``if`` or a ``for`` line), then what ``body`` adds beneath it, and
        return ``body``'s expression; the header is taken out again when ``body`` adds
        nothing under it."""
        start = len(self.lines)
        self.lines.append(header)
        inner = body()
        if len(self.lines) == start + 1:
            del self.lines[start]
        return inner

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


def _read(src: Source, kind: Any, value: str, indent: str, conv: Any, flat: bool = True) -> str:
    """Add the lines that check ``value`` for ``kind`` and return the expression of what it
    reads as; ``flat`` when the expression is evaluated once, after the lines (not once per
    item of a list): a record is then read in place."""
    out = src.lines.append
    if kind in _INLINE_READS:
        out(f"{indent}if type({value}) is not {_INLINE_READS[kind]}: raise Slow")
        return value
    member = optional_member(kind)
    if member is not None:
        inner = src.under(
            f"{indent}if {value} is not None:",
            lambda: _read(src, member, value, indent + "    ", conv, flat),
        )
        return value if inner == value else f"(None if {value} is None else {inner})"
    if typing.get_origin(kind) is list and len(typing.get_args(kind)) == 1:
        item, (item_kind,) = src.local("_item"), typing.get_args(kind)
        out(f"{indent}if type({value}) is not list: raise Slow")
        inner = src.under(
            f"{indent}for {item} in {value}:",
            lambda: _read(src, item_kind, item, indent + "    ", conv, flat=False),
        )
        return f"list({value})" if inner == item else f"[{inner} for {item} in {value}]"
    if isinstance(kind, type) and attrs.has(kind):
        nested = structurer(kind, conv)
        if nested is None:
            raise NotHandled
        fields = fields_of_record(kind)
        if not flat or any(field.default is not attrs.NOTHING for field in fields):
            return f"{src.name(nested)}({value})"
        # read in place: the same checks and the same constructor call, one call less
        out(f"{indent}if type({value}) is not dict: raise Slow")
        arguments = []
        for field in fields:
            inner = src.local("_value")
            out(f"{indent}{inner} = {value}[{field.name!r}]")
            arguments.append(f"{field.name}={_read(src, field.type, inner, indent, conv)}")
        return f"{src.name(kind)}({', '.join(arguments)})"
    hook = conv.get_structure_hook(kind)
    if hook == conv._structure_call:
        raise NotHandled
    if getattr(hook, "__func__", None) is Choices.from_json:  # an enum or a Literal
        return f"{src.name(hook.__self__.by_json)}[type({value}), {value}]"
    if kind in _STRING_PARSERS:  # the hook checks for a string and parses it: so here
        out(f"{indent}if type({value}) is not str: raise Slow")
        return f"{src.name(_STRING_PARSERS[kind])}({value})"
    return f"{src.name(hook)}({value}, {src.name(kind)})"


def _make_structurer(kind: Any, conv: cattrs.Converter) -> Callable[[Any], Any]:
    src = Source()
    src.lines += ["def structure(o):", "    if type(o) is not dict: raise Slow", "    kw = {}"]
    arguments = []
    fields = fields_of_record(kind)
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
