"""Route names and the paths they build: ``path_for(name, **params)``.

Built once at freeze from every route's full name, pattern and the types its path parameters
are read as. A parameter is written with the text converter that reads it (and must read
back equal), then percent-encoded per segment, so that the path reaches the route with the
same values; a ``{*wildcard}`` keeps its ``/``. Nothing here runs per request: a request only
holds a reference to the :class:`PathBuilder`.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

import attrs

from .._codec.convert import to_text
from .._errors import ConfigurationError
from .meta import RouteMeta
from .pattern import SegmentKind, parse_pattern

__all__ = ["NamedRoute", "PathBuilder", "build_paths"]

#: What a path segment may hold unencoded besides letters, digits and ``-._~`` (RFC 3986's
#: pchar); the router decodes every escape of a segment after splitting on ``/``.
_SEGMENT_SAFE = "!$&'()*+,;=:@"
#: Segments clients resolve away (RFC 3986 section 5.2.4), whatever their encoding.
_DOT_SEGMENTS = frozenset({".", ".."})


@attrs.frozen
class NamedRoute:
    """One route as names see it: its ``meta`` (with its full name), ``label``
    (``GET /users/{id}``, for messages), ``pattern`` (the full pattern) and the ``types``
    its path parameters are read as (a parameter left out is written with ``str``)."""

    meta: RouteMeta
    label: str
    pattern: str
    types: Mapping[str, Any]


class _Path:
    """The path of one name: literal segments encoded once, a writer per parameter."""

    __slots__ = ("name", "pattern", "pieces", "writers")

    def __init__(self, name: str, pattern: str, types: Mapping[str, Any]) -> None:
        self.name = name
        self.pattern = pattern
        #: per segment: its encoded text (a literal), or (parameter, is a wildcard)
        self.pieces: list[str | tuple[str, bool]] = []
        self.writers: dict[str, Callable[[Any], str]] = {}
        for segment in parse_pattern(pattern).segments:
            if segment.kind is SegmentKind.LITERAL:
                self.pieces.append(quote(segment.text, safe=_SEGMENT_SAFE))
                continue
            self.pieces.append((segment.text, segment.kind is SegmentKind.WILDCARD))
            kind = types.get(segment.text)
            writer = str if kind is None else functools.partial(to_text, kind=kind)
            self.writers[segment.text] = writer

    def build(self, params: Mapping[str, Any]) -> str:
        for param in self.writers:
            if param not in params:
                raise self._error(f"missing path parameter {param!r} (the route is {self.pattern})")
        for param in params:
            if param not in self.writers:
                raise self._error(f"the route {self.pattern} has no path parameter {param!r}")
        out = []
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(piece)
            else:
                param, wildcard = piece
                out.append(self._write(param, params[param], wildcard))
        return "/" + "/".join(out)

    def _write(self, param: str, value: Any, wildcard: bool) -> str:
        try:
            text = self.writers[param](value)
        except ValueError as exc:
            raise self._error(f"path parameter {param!r}: {exc}") from None
        if "\x00" in text:
            raise self._error(f"path parameter {param!r} holds a NUL, which no path may carry")
        parts = text.split("/") if wildcard else [text]
        if not parts[0]:
            empty = "starts with '/'" if text else "is empty"
            raise self._error(f"path parameter {param!r} {empty}: its segment needs some text")
        for part in parts:
            if part in _DOT_SEGMENTS:
                raise self._error(
                    f"path parameter {param!r} has the segment {part!r}, which clients "
                    "resolve away as a relative path"
                )
        try:
            return "/".join(quote(part, safe=_SEGMENT_SAFE) for part in parts)
        except ValueError as exc:  # a lone surrogate cannot be UTF-8
            raise self._error(f"path parameter {param!r}: {exc}") from None

    def _error(self, problem: str) -> ValueError:
        return ValueError(f"path_for({self.name!r}): {problem}")


@attrs.frozen
class _Shared:
    """A default name that routes with different paths share: ``path_for`` refuses it."""

    name: str
    labels: tuple[str, ...]

    def build(self, params: Mapping[str, Any]) -> str:
        raise ValueError(
            f"path_for({self.name!r}): {len(self.labels)} routes have the default name "
            f"{self.name!r} ({', '.join(self.labels)}); register the one you mean with "
            "name=... to tell them apart"
        )


class PathBuilder:
    """The paths of an application's named routes (``App.path_for``, ``request.path_for``)."""

    __slots__ = ("_paths",)

    def __init__(self, paths: dict[str, _Path | _Shared]) -> None:
        self._paths = paths

    def path_for(self, name: str, /, **params: Any) -> str:
        """The path of the route named ``name`` with ``params`` as its path parameters,
        percent-encoded (``/users/42``). ``ValueError`` naming what is wrong: no route of
        that name, a default name routes with different paths share, a missing or an extra
        parameter, or a value its type's converter would not read back equal."""
        path = self._paths.get(name)
        if path is None:
            close = difflib.get_close_matches(name, self._paths, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"path_for({name!r}): no route is named {name!r}{hint}")
        return path.build(params)


def build_paths(routes: Iterable[NamedRoute]) -> PathBuilder:
    """The builder for ``routes`` (in registration order). A name given with ``name=`` is
    the route's own: ``ConfigurationError`` when two routes with different paths are given
    the same full name, and a default name equal to it does not count. Routes that share a
    path share their name without a conflict (``GET`` and ``POST`` of one form); the first
    route that reads a parameter typed decides how it is written."""
    explicit: dict[str, list[NamedRoute]] = {}
    default: dict[str, list[NamedRoute]] = {}
    for route in routes:
        named = explicit if route.meta.explicit else default
        named.setdefault(route.meta.name, []).append(route)
    paths: dict[str, _Path | _Shared] = {}
    for name, group in default.items():
        if name not in explicit:
            paths[name] = _one_path(name, group)
    for name, group in explicit.items():
        path = _one_path(name, group)
        if type(path) is _Shared:
            first, second = path.labels[:2]
            raise ConfigurationError(
                f"two routes are named {name!r}: {first} and {second}; "
                "give each its own name (a route name stands for one path)"
            )
        paths[name] = path
    return PathBuilder(paths)


def _one_path(name: str, group: list[NamedRoute]) -> _Path | _Shared:
    firsts: dict[str, NamedRoute] = {}  # the first route of each path
    for route in group:
        firsts.setdefault(route.pattern, route)
    if len(firsts) > 1:
        return _Shared(name, tuple(route.label for route in firsts.values()))
    types: dict[str, Any] = {}
    for route in group:
        for param, kind in route.types.items():
            types.setdefault(param, kind)
    return _Path(name, group[0].pattern, types)
