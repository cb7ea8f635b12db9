"""Route pattern syntax: parsing, validation and joining under a nest prefix.

A pattern is ``/`` followed by segments separated by ``/``. Each segment is either literal
text, a ``{name}`` parameter (one non-empty path segment) or, as the last segment only, a
``{*name}`` wildcard (one or more remaining segments). The root pattern is ``/``; a pattern
ending in ``/`` (``/users/``) is its own pattern, distinct from ``/users``. Internally a
trailing slash is an empty literal last segment, which is also how a request path ending in
``/`` splits, so the two line up without special cases.

Literal text is compared with *decoded* request segments, so it is written as plain text
(``/caf\u00e9`` matches ``/caf%C3%A9``).

Every mistake raises ``ConfigurationError`` naming the pattern. Nothing here matches requests
(that is ``trie`` and ``table``) or registers routes (that is ``router``).
"""

from __future__ import annotations

import enum

import attrs

from .._errors import ConfigurationError

__all__ = ["Pattern", "Segment", "SegmentKind", "parse_pattern", "parse_prefix"]


class SegmentKind(enum.Enum):
    """What one pattern segment matches."""

    LITERAL = "literal"
    PARAM = "param"
    WILDCARD = "wildcard"


@attrs.frozen
class Segment:
    """One segment of a pattern: ``text`` is the literal text or the parameter's name."""

    kind: SegmentKind
    text: str

    def render(self) -> str:
        """The segment as written in a pattern."""
        if self.kind is SegmentKind.PARAM:
            return "{" + self.text + "}"
        if self.kind is SegmentKind.WILDCARD:
            return "{*" + self.text + "}"
        return self.text

    @property
    def shape(self) -> str:
        """The segment with parameter names erased: two patterns with the same shape
        match exactly the same paths. (Literals never contain braces, so no clash.)"""
        if self.kind is SegmentKind.PARAM:
            return "{}"
        if self.kind is SegmentKind.WILDCARD:
            return "{*}"
        return self.text


_ROOT = (Segment(SegmentKind.LITERAL, ""),)


@attrs.frozen
class Pattern:
    """A parsed, valid route pattern. Build it with :func:`parse_pattern`."""

    source: str
    segments: tuple[Segment, ...]

    @property
    def param_names(self) -> tuple[str, ...]:
        """The parameter and wildcard names, in path order."""
        return tuple(s.text for s in self.segments if s.kind is not SegmentKind.LITERAL)

    @property
    def is_static(self) -> bool:
        """True when every segment is literal (served from a dict, before the trie)."""
        return all(s.kind is SegmentKind.LITERAL for s in self.segments)

    @property
    def is_root(self) -> bool:
        """True for ``/``."""
        return self.segments == _ROOT

    @property
    def shape(self) -> tuple[str, ...]:
        """The segments with parameter names erased (see :attr:`Segment.shape`)."""
        return tuple(s.shape for s in self.segments)

    def under(self, prefix: Pattern) -> Pattern:
        """This pattern mounted under a nest ``prefix``: ``/`` becomes the prefix itself,
        ``/x`` becomes ``prefix/x``. Raises ``ConfigurationError`` when the joined pattern
        repeats a parameter name."""
        segments = prefix.segments if self.is_root else prefix.segments + self.segments
        source = "/" + "/".join(s.render() for s in segments)
        _check_unique_names(source, segments)
        return Pattern(source, segments)


def _invalid(source: object, reason: str, what: str = "route pattern") -> ConfigurationError:
    return ConfigurationError(f"invalid {what} {source!r}: {reason}")


def _parse_segment(source: str, text: str, last: bool) -> Segment:
    if "{" not in text and "}" not in text:
        if not text and not last:
            raise _invalid(source, "empty segment ('//')")
        return Segment(SegmentKind.LITERAL, text)
    if text.count("{") != text.count("}") or text.find("{") > text.find("}"):
        raise _invalid(source, f"unbalanced braces in segment {text!r}")
    if text.count("{") > 1 or not (text.startswith("{") and text.endswith("}")):
        raise _invalid(
            source,
            f"segment {text!r} mixes literal text and a parameter; "
            "a parameter must be a whole segment",
        )
    inner = text[1:-1]
    kind = SegmentKind.PARAM
    if inner.startswith("*"):
        kind, inner = SegmentKind.WILDCARD, inner[1:]
        if not last:
            raise _invalid(source, f"wildcard {text!r} must be the last segment")
    if not inner:
        raise _invalid(source, f"empty parameter name in {text!r}")
    if not inner.isidentifier():
        raise _invalid(source, f"parameter name {inner!r} is not a Python identifier")
    return Segment(kind, inner)


def _check_unique_names(source: str, segments: tuple[Segment, ...]) -> None:
    seen: set[str] = set()
    for segment in segments:
        if segment.kind is SegmentKind.LITERAL:
            continue
        if segment.text in seen:
            raise _invalid(source, f"parameter name {segment.text!r} is used twice")
        seen.add(segment.text)


def parse_pattern(source: str) -> Pattern:
    """Parse and validate a route pattern such as ``/users/{user_id}/files/{*path}``.

    Raises ``ConfigurationError`` naming the pattern when it does not start with ``/``, has an
    empty segment (``//``), an empty ``{}``, a name that is not a Python identifier, unbalanced
    braces, braces mixed with literal text in one segment (``/a{b}``), a wildcard that is not
    the last segment, or the same parameter name twice.
    """
    if not isinstance(source, str):
        raise _invalid(source, "a pattern must be a str")
    if not source.startswith("/"):
        raise _invalid(source, "a pattern must start with '/'")
    parts = source[1:].split("/")
    last = len(parts) - 1
    segments = tuple(_parse_segment(source, part, i == last) for i, part in enumerate(parts))
    _check_unique_names(source, segments)
    return Pattern(source, segments)


def parse_prefix(source: str) -> Pattern:
    """Parse a ``nest`` prefix: a pattern that starts with ``/``, does not end with ``/``
    (so ``/`` itself is refused) and has no wildcard. ``{params}`` are allowed."""
    if not isinstance(source, str) or not source.startswith("/"):
        raise _invalid(source, "a prefix must start with '/'", "nest prefix")
    if source.endswith("/"):
        raise _invalid(source, "a prefix must not end with '/'", "nest prefix")
    pattern = parse_pattern(source)
    if any(s.kind is SegmentKind.WILDCARD for s in pattern.segments):
        raise _invalid(source, "a prefix cannot contain a {*wildcard}", "nest prefix")
    return pattern
