"""The frozen route table: built once from a router's flattened routes, then matched per request.

:func:`build_table` checks for collisions, calls ``prepare`` once per endpoint, groups the
routes by path shape into leaves, precomputes every answer that does not depend on the request
(405 and OPTIONS results, 404 results per nest scope) and fills the trie plus a dict of fully
literal paths. :meth:`RouteTable.match` is the per-request entry point.

The rules, in the order ``match`` applies them:

1. The path decides first, the method second: the most specific matching path (literal >
   ``{param}`` > ``{*wildcard}``, with backtracking) is chosen among all routes regardless of
   method; if it has no route for the method the answer is 405, even when a less specific
   pattern has one. (This is the trie-router behaviour of Axum, not Starlette's first match.)
2. ``HEAD`` falls back to ``GET``; ``OPTIONS`` without a route is answered automatically.
3. No path match: the same path with the trailing slash toggled is tried and, if it matches
   any route, the answer is a redirect to it.
4. Otherwise 404, with the fallback of the most specific nest scope.

Registration-time details (patterns, the builder) live in ``pattern`` and ``router``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from .._errors import ConfigurationError
from .._http.method import Method
from .meta import RouteMeta
from .pattern import Pattern, SegmentKind
from .results import (
    WEBSOCKET,
    AutoOptions,
    BadPath,
    Endpoint,
    Found,
    MatchResult,
    NoRoute,
    Owner,
    Redirect,
    WrongMethod,
)
from .trie import Leaf, Node, decode_segment, search

__all__ = ["RouteSpec", "RouteTable", "ScopeSpec", "build_table"]

T = TypeVar("T")
S = TypeVar("S")

_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE")
_BAD_START = BadPath("the request path must start with '/'")
_BAD_ESCAPE = BadPath("the request path has an invalid percent-encoding")
_BAD_UTF8 = BadPath("the request path is not valid UTF-8 once percent-decoded")
#: A redirect Location starting like this would leave the site: browsers read ``//host`` and
#: ``/\host`` (a backslash counts as a slash in WHATWG URL parsing) as another host.
_SCHEME_RELATIVE = ("//", "/\\")


@attrs.frozen
class RouteSpec:
    """One route after nest prefixes are applied (the builder's output)."""

    method: Method
    pattern: Pattern
    handler: Callable[..., Any]
    routers: tuple[Owner, ...]
    subprotocols: tuple[str, ...] = ()
    meta: RouteMeta | None = None


@attrs.frozen
class ScopeSpec:
    """One router's place in the nest tree: its full prefix (``None`` for the outermost router),
    its router chain and the fallback handler in force there (its own or an outer one's)."""

    prefix: Pattern | None
    routers: tuple[Owner, ...]
    fallback: Callable[..., Any] | None


class _Scope(Generic[T, S]):
    __slots__ = ("literals", "result")

    def __init__(self, literals: tuple[str | None, ...], result: NoRoute[T, S]) -> None:
        self.literals = literals  # literal text per prefix segment, None for a parameter
        self.result = result

    def covers(self, segs: list[str]) -> bool:
        if len(segs) < len(self.literals):
            return False
        for literal, seg in zip(self.literals, segs, strict=False):
            if literal is None:
                if not seg:
                    return False
            elif seg != literal:
                return False
        return True


class RouteTable(Generic[T, S]):
    """A frozen router: ``match(method, raw_path)`` answers with a :data:`MatchResult`.

    Built by ``Router.freeze(prepare, prepare_scope)``; ``endpoints`` lists every endpoint that
    was prepared, routes in registration order (nested ones where they were nested), then
    fallbacks.
    """

    __slots__ = ("_root", "_scopes", "_static", "endpoints")

    def __init__(
        self,
        root: Node[T],
        static: dict[str, Leaf[T]],
        scopes: list[_Scope[T, S]],
        endpoints: tuple[Endpoint, ...],
    ) -> None:
        self._root = root
        self._static = static
        self._scopes = scopes
        self.endpoints = endpoints

    def match(self, method: str, raw_path: str) -> MatchResult[T, S]:
        """Match a request. ``raw_path`` is the path as sent (percent-encoded, without the query
        string); it is split on ``/`` first and each segment decoded after, so ``%2F`` stays
        inside one parameter. See the module docstring for the order of the rules."""
        leaf = self._static.get(raw_path)
        if leaf is not None:
            entry = leaf.targets.get(method)
            if entry is not None:
                return Found(entry[0], {})
            return leaf.auto_options if method == "OPTIONS" else leaf.not_allowed
        if raw_path[:1] != "/":
            return _BAD_START
        segs = raw_path[1:].split("/")
        if "%" in raw_path:
            try:
                segs = [decode_segment(s) if "%" in s else s for s in segs]
            except UnicodeError:
                return _BAD_UTF8
            except ValueError:
                return _BAD_ESCAPE
        values: list[str] = []
        leaf = search(self._root, segs, 0, values)
        if leaf is not None:
            entry = leaf.targets.get(method)
            if entry is not None:
                return Found(entry[0], dict(zip(entry[1], values, strict=True)))
            return leaf.auto_options if method == "OPTIONS" else leaf.not_allowed
        return self._unmatched(raw_path, segs)

    def _unmatched(self, raw_path: str, segs: list[str]) -> Redirect | NoRoute[T, S]:
        if segs[-1]:
            twin, location = [*segs, ""], raw_path + "/"
        elif len(segs) > 1:
            twin, location = segs[:-1], raw_path[:-1]
        else:
            twin, location = None, ""
        if (
            twin is not None
            and not location.startswith(_SCHEME_RELATIVE)
            and (location in self._static or search(self._root, twin, 0, []) is not None)
        ):
            return Redirect(location)
        for scope in self._scopes:
            if scope.covers(segs):
                return scope.result
        raise AssertionError("the outermost scope covers every path")  # pragma: no cover


def _sort_methods(methods: set[str]) -> tuple[str, ...]:
    known = [m for m in _METHOD_ORDER if m in methods]
    return tuple(Method.of(m) for m in known + sorted(methods - set(known)))


def _common_chain(chains: Sequence[tuple[Owner, ...]]) -> tuple[Owner, ...]:
    first = chains[0]
    n = len(first)
    for chain in chains[1:]:
        n = min(n, len(chain))
        while chain[:n] != first[:n]:
            n -= 1
    return first[:n]


def _make_leaf(
    routes: list[tuple[RouteSpec, T]], scope_of: Callable[[tuple[Owner, ...]], Any]
) -> Leaf[T]:
    targets: dict[str, tuple[T, tuple[str, ...]]] = {
        spec.method: (target, spec.pattern.param_names) for spec, target in routes
    }
    if "GET" in targets and "HEAD" not in targets:
        targets[Method.HEAD] = targets[Method.GET]
    allow = _sort_methods({*targets, "OPTIONS"} - {WEBSOCKET})
    scope = scope_of(_common_chain([spec.routers for spec, _ in routes]))
    not_allowed = WrongMethod(allow, scope, websocket=WEBSOCKET in targets)
    return Leaf(targets, not_allowed, AutoOptions(allow, scope))


def _check_collisions(routes: Sequence[RouteSpec], scopes: Sequence[ScopeSpec]) -> None:
    seen: dict[tuple[str, tuple[str, ...]], str] = {}
    for spec in routes:
        key = (str(spec.method), spec.pattern.shape)
        other = seen.get(key)
        if other is not None:
            same = (
                "" if other == spec.pattern.source else f" (it matches the same paths as {other})"
            )
            raise ConfigurationError(
                f"duplicate route: {spec.method} {spec.pattern.source} is registered twice{same}"
            )
        seen[key] = spec.pattern.source
    prefixes: dict[tuple[str, ...], str] = {}
    for scope in scopes:
        if scope.prefix is None:
            continue
        other = prefixes.get(scope.prefix.shape)
        if other is not None:
            raise ConfigurationError(
                f"two routers are nested at the same prefix: {other} and {scope.prefix.source}"
            )
        prefixes[scope.prefix.shape] = scope.prefix.source


def build_table(
    routes: Sequence[RouteSpec],
    scopes: Sequence[ScopeSpec],
    prepare: Callable[[Endpoint], T],
    prepare_scope: Callable[[tuple[Owner, ...]], S],
) -> RouteTable[T, S]:
    """Build the table for flattened ``routes`` and nest ``scopes`` (the first scope is the
    outermost router). ``prepare_scope`` is called once per distinct router chain that a match
    result can carry. Raises ``ConfigurationError`` for a method and pattern registered twice
    (also across nested routers) or two routers nested at the same prefix."""
    _check_collisions(routes, scopes)
    prepared_scopes: dict[tuple[int, ...], S] = {}

    def scope_of(chain: tuple[Owner, ...]) -> S:
        key = tuple(id(owner) for owner in chain)
        if key not in prepared_scopes:
            prepared_scopes[key] = prepare_scope(chain)
        return prepared_scopes[key]

    endpoints: list[Endpoint] = []
    groups: dict[tuple[str, ...], list[tuple[RouteSpec, T]]] = {}
    for spec in routes:
        endpoint = Endpoint(
            spec.method,
            spec.pattern.source,
            spec.handler,
            spec.routers,
            spec.pattern.param_names,
            spec.subprotocols,
            spec.meta,
        )
        endpoints.append(endpoint)
        groups.setdefault(spec.pattern.shape, []).append((spec, prepare(endpoint)))

    root: Node[T] = Node()
    static: dict[str, Leaf[T]] = {}
    for shape, group in groups.items():
        pattern = group[0][0].pattern
        leaf = _make_leaf(group, scope_of)
        node = root
        for segment, part in zip(pattern.segments, shape, strict=True):
            if segment.kind is SegmentKind.WILDCARD:
                node.wildcard = leaf
                break
            node = node.child(part)
        else:
            node.leaf = leaf
        if pattern.is_static and "%" not in pattern.source:
            static[pattern.source] = leaf

    built: list[tuple[tuple[int, tuple[int, ...]], _Scope[T, S]]] = []
    for scope in scopes:
        segments = () if scope.prefix is None else scope.prefix.segments
        fallback: T | None = None
        if scope.fallback is not None:
            source = "/" if scope.prefix is None else scope.prefix.source
            endpoint = Endpoint(None, source, scope.fallback, scope.routers, ())
            endpoints.append(endpoint)
            fallback = prepare(endpoint)
        literals = tuple(s.text if s.kind is SegmentKind.LITERAL else None for s in segments)
        rank = (-len(literals), tuple(int(lit is None) for lit in literals))
        built.append((rank, _Scope(literals, NoRoute(fallback, scope_of(scope.routers)))))
    built.sort(key=lambda item: item[0])
    return RouteTable(root, static, [scope for _, scope in built], tuple(endpoints))
