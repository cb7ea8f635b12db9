"""Every relative link of README.md and docs/*.md leads somewhere: the file exists and a
``#anchor`` is the slug of one of its headings (GitHub's slugs: lower case, punctuation but
``-`` and ``_`` dropped, spaces as ``-``, ``-1``, ``-2`` ... after repeats)."""

from __future__ import annotations

import functools
import pathlib
import re

import pytest

from ._pages import PAGES, ROOT, name_of

_FENCED = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).*?\1", re.DOTALL)
_INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, mailto:, ...


def _prose(text: str) -> str:
    """``text`` without its code blocks and code spans (a ``[x](y)`` there is code)."""
    return _CODE_SPAN.sub("", _FENCED.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.cache
def anchors(path: pathlib.Path) -> frozenset[str]:
    """Every heading anchor of the Markdown file ``path``."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCED.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def _links(page: pathlib.Path) -> list[str]:
    prose = _prose(page.read_text())
    return _INLINE.findall(prose) + _REFERENCE.findall(prose)


def _broken(page: pathlib.Path, target: str) -> str | None:
    """Why the link ``target`` of ``page`` leads nowhere, or ``None``."""
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    if not destination.exists():
        return "no such file"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"no heading #{anchor} in {destination.relative_to(ROOT)}"
    return None


def test_slugs_follow_github() -> None:
    assert slug("`Response.file(path, *, download=False)`") == "responsefilepath--downloadfalse"
    assert slug("Query strings: `Query[T]`") == "query-strings-queryt"
    assert slug("HTTP/1.1 parsers") == "http11-parsers"


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_every_relative_link_leads_somewhere(page: pathlib.Path) -> None:
    broken = []
    for target in _links(page):
        if _EXTERNAL.match(target):
            continue
        reason = _broken(page, target)
        if reason is not None:
            broken.append(f"{target}: {reason}")
    assert not broken, "\n".join(broken)
