"""``Content-Disposition`` for a file response (RFC 6266, with RFC 8187's ``filename*``)."""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["content_disposition"]

# Bytes a quoted-string filename may carry as they are: visible ASCII and space, but not the
# quote, the backslash or the percent sign (which some clients decode).
_PLAIN = frozenset(chr(code) for code in range(0x20, 0x7F)) - {'"', "\\", "%"}


def content_disposition(filename: str | None, *, download: bool) -> str | None:
    """``attachment`` (``download``) or ``inline``, with ``filename``: a plain ``filename=``
    when it is printable ASCII, else an ASCII stand-in (``_`` for each other character) and
    ``filename*=UTF-8''`` with the exact name percent-encoded. ``None`` when there is
    nothing to say (an inline file without a name)."""
    kind = "attachment" if download else "inline"
    if filename is None:
        return kind if download else None
    filename = filename.replace("\r", "").replace("\n", "")
    fallback = "".join(char if char in _PLAIN else "_" for char in filename)
    value = f'{kind}; filename="{fallback}"'
    if fallback != filename:
        value += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return value
