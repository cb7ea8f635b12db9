"""The segment trie and the per-request path work: splitting, percent-decoding, searching.

A :class:`Node` has literal children by text, at most one ``{param}`` child and at most one
``{*wildcard}`` leaf. :func:`search` tries them in that order at every depth and backtracks
when a branch dead-ends, so precedence (literal > param > wildcard) never depends on
registration order. Parameter names are not stored in the trie: :func:`search` collects the
values positionally and each leaf entry knows its names.

Everything here is on the request hot path: plain classes with ``__slots__``, no regex, no
per-request allocation beyond the segment list and the captured values.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from .results import AutoOptions, WrongMethod

__all__ = ["Leaf", "Node", "decode_segment", "search"]

T = TypeVar("T")

_HEX = frozenset("0123456789abcdefABCDEF")


class Leaf(Generic[T]):
    """Where a pattern ends: the prepared targets by method, and the precomputed answers for a
    method that is not there."""

    __slots__ = ("auto_options", "not_allowed", "targets")

    def __init__(
        self,
        targets: dict[str, tuple[T, tuple[str, ...]]],
        not_allowed: WrongMethod[Any],
        auto_options: AutoOptions[Any],
    ) -> None:
        #: method -> (prepared target, parameter names in path order)
        self.targets = targets
        self.not_allowed = not_allowed
        self.auto_options = auto_options


class Node(Generic[T]):
    """One depth of the trie (one path segment consumed)."""

    __slots__ = ("leaf", "literals", "param", "wildcard")

    def __init__(self) -> None:
        self.literals: dict[str, Node[T]] = {}
        self.param: Node[T] | None = None
        self.wildcard: Leaf[T] | None = None
        self.leaf: Leaf[T] | None = None

    def child(self, shape: str) -> Node[T]:
        """The child for a segment shape (literal text or ``"{}"``), created if missing."""
        if shape == "{}":
            if self.param is None:
                self.param = Node()
            return self.param
        node = self.literals.get(shape)
        if node is None:
            node = self.literals[shape] = Node()
        return node


def search(node: Node[T], segs: list[str], i: int, values: list[str]) -> Leaf[T] | None:
    """The leaf matching ``segs[i:]`` below ``node``, appending captured values to ``values``
    (left as they were when nothing matches). Parameters and wildcards never match an empty
    segment, so ``/users/`` is not ``/users/{id}`` and ``/files/`` is not ``/files/{*rest}``."""
    if i == len(segs):
        return node.leaf
    seg = segs[i]
    child = node.literals.get(seg)
    if child is not None:
        leaf = search(child, segs, i + 1, values)
        if leaf is not None:
            return leaf
    if seg:
        child = node.param
        if child is not None:
            values.append(seg)
            leaf = search(child, segs, i + 1, values)
            if leaf is not None:
                return leaf
            values.pop()
        leaf = node.wildcard
        if leaf is not None:
            values.append("/".join(segs[i:]))
            return leaf
    return None


def decode_segment(segment: str) -> str:
    """Percent-decode one path segment strictly: a ``%`` must be followed by two hex digits,
    the decoded bytes must be UTF-8 and hold no NUL (``%00``: C libraries, file systems and
    databases end strings there, so a parameter could mean one thing here and another there).
    Raises ``ValueError`` (``UnicodeDecodeError`` is one) otherwise. Characters outside escapes
    are kept as they are."""
    head, *rest = segment.split("%")
    buf = bytearray(head.encode())
    for part in rest:
        if len(part) < 2 or part[0] not in _HEX or part[1] not in _HEX:
            raise ValueError("invalid percent-encoding")
        buf.append(int(part[:2], 16))
        buf += part[2:].encode()
    if 0 in buf:
        raise ValueError("percent-encoded NUL")
    return buf.decode()
