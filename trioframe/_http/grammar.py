"""The HTTP field grammar every reader and writer in trioframe checks against, written once.

Compiled patterns for whole values (``TOKEN.fullmatch(name)``), and pattern pieces for the
scanners that build larger expressions (the chunk-extension and ``Forwarded`` readers), each
with the rule it implements. ``str`` patterns serve text the application passes or header
values decoded as ISO-8859-1; the ``_BYTES`` twins serve the protocol layer's raw bytes.
"""

from __future__ import annotations

import re

__all__ = [
    "ATTR_CHAR",
    "FIELD_CONTROL",
    "FIELD_CONTROL_BYTES",
    "LOWER_TOKEN_BYTES",
    "OBS_TEXT",
    "QDTEXT",
    "QUOTED_PAIR_TEXT",
    "TCHAR",
    "TCHAR_PUNCTUATION",
    "TOKEN",
    "TOKEN_BYTES",
]

#: The punctuation a token may hold besides letters and digits (RFC 9110 section 5.6.2).
TCHAR_PUNCTUATION = "!#$%&'*+-.^_`|~"

#: ``tchar`` as a character class, to build patterns from (RFC 9110 section 5.6.2).
TCHAR = rf"[{re.escape(TCHAR_PUNCTUATION)}0-9A-Za-z]"

#: ``token = 1*tchar`` (RFC 9110 section 5.6.2): field names, methods, parameter names.
TOKEN = re.compile(rf"{TCHAR}+")
TOKEN_BYTES = re.compile(rf"{TCHAR}+".encode("ascii"))

#: An HTTP/2 field name: a token without upper-case letters (RFC 9113 section 8.2.1).
LOWER_TOKEN_BYTES = re.compile(rf"[{re.escape(TCHAR_PUNCTUATION)}0-9a-z]+".encode("ascii"))

#: ``attr-char`` (RFC 8187 section 3.2.1): a tchar other than ``*``, ``'`` and ``%``, as a
#: character class.
ATTR_CHAR = r"[!#$&+\-.^_`|~0-9A-Za-z]"

#: The characters of ``qdtext`` below obs-text (RFC 9110 section 5.6.4: HTAB, SP and visible
#: ASCII but DQUOTE and backslash), as the inside of a character class.
QDTEXT = r"\t \x21\x23-\x5b\x5d-\x7e"
#: The characters a ``quoted-pair`` may escape below obs-text (HTAB, SP, visible ASCII), as
#: the inside of a character class.
QUOTED_PAIR_TEXT = r"\t \x21-\x7e"
#: ``obs-text`` (RFC 9110 section 5.5), as the inside of a character class.
OBS_TEXT = r"\x80-\xff"

#: A control character no field value may hold: every one but HTAB (RFC 9110 section 5.5).
FIELD_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
FIELD_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
