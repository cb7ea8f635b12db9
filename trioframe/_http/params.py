"""Header values with parameters (``form-data; name="a"``, ``multipart/form-data; boundary=x``),
read strictly and in one linear pass.

The grammar is RFC 9110 section 5.6.6 (``value *( OWS ";" OWS [ name "=" value ] )``, each
parameter value a token or a quoted-string) with RFC 8187 extended values
(``filename*=UTF-8''%E5%86%99.jpg``). Anything that could be read two ways is refused with a
``ParameterError`` rather than guessed at:

* a parameter given twice (``name="a"; name="b"``);
* RFC 2231 continuations (``name*0=...; name*1=...``): no browser or common client sends
  them, and they are where parsers disagree most;
* an extended value in a charset other than UTF-8 or ISO-8859-1, malformed percent-encoding,
  bytes that do not decode, a quoted extended value;
* control characters anywhere in a value (HTAB excepted).

When both ``p`` and ``p*`` are present, ``p*`` wins (RFC 8187 section 4.2, RFC 6266 section 4.3).

Quoted-strings: ``\\"`` and ``\\\\`` are escapes, as RFC 9110 has senders use them; any other
backslash is an ordinary character, because browsers (WHATWG HTML, multipart/form-data) send
file names as raw UTF-8 with only ``"``, CR and LF escaped (as ``%22``, ``%0D``, ``%0A``) and
never escape a backslash. Percent sequences in quoted values are left as they are: ``%`` itself
is not escaped by browsers, so ``%22`` cannot be told apart from a name that contains it.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from .grammar import ATTR_CHAR, FIELD_CONTROL, TOKEN

__all__ = ["MAX_PARAMETERS", "ParameterError", "parse_header_parameters"]


class ParameterError(ValueError):
    """A header value whose parameters cannot be read unambiguously; the message says why."""


#: Parameters one header value may carry: browsers send two (name, filename), a
#: Content-Type one or two, so this bounds the work per value well above any real client.
MAX_PARAMETERS = 32

_MAIN_VALUE = re.compile(rf"{TOKEN.pattern}(?:/{TOKEN.pattern})?")
_SPACES = re.compile(r"[ \t]*")
_SEPARATORS = re.compile(r"[ \t;]*")  # OWS and empty parameters, which RFC 9110 allows
# A quoted-string: any character but DQUOTE, backslash and controls; an escaped DQUOTE or
# backslash; or a lone backslash. The possessive ``*+`` never gives characters back, so an
# escaped DQUOTE is always an escape (never the closing quote) and a failed match is linear.
_QUOTED = re.compile(r'"((?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\["\\]|\\)*+)"')
# RFC 8187: charset "'" [ language ] "'" *( attr-char / pct-encoded ).
_EXT_VALUE = re.compile(rf"([^']+)'([0-9A-Za-z-]*)'((?:{ATTR_CHAR}|%[0-9A-Fa-f]{{2}})*)")
_EXT_CHARSETS = {"utf-8": "utf-8", "iso-8859-1": "latin-1"}
_SHOWN = 40  # characters of a client's text echoed in an error message


def _shown(text: str) -> str:
    """``text`` quoted for an error message, cut to a readable length."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "..."


def _skip(run: re.Pattern[str], text: str, pos: int) -> int:
    """The position after the run of ``run`` characters that starts at ``pos``."""
    match = run.match(text, pos)
    return pos if match is None else match.end()


def _unescape(quoted: str) -> str:
    """The content of a quoted-string with its ``\\\\`` and ``\\"`` escapes undone. Splitting
    at ``\\\\`` pairs backslashes from the left, as reading the string does."""
    return "\\".join(piece.replace('\\"', '"') for piece in quoted.split("\\\\"))


def parse_header_parameters(header: str) -> tuple[str, dict[str, str]]:
    """``form-data; name="a"; filename*=UTF-8''%C3%A9`` →
    ``("form-data", {"name": "a", "filename": "é"})``.

    The value before the first ``;`` must be a token or ``type/subtype``; it and the
    parameter names are returned lower-case. Raises ``ParameterError`` for anything
    malformed or ambiguous (see the module docstring) and for more than ``MAX_PARAMETERS``
    parameters."""
    main, semicolon, _ = header.partition(";")
    value = main.strip(" \t")
    if not _MAIN_VALUE.fullmatch(value):
        raise ParameterError(f"{_shown(value)} is not a token or type/subtype")
    plain: dict[str, str] = {}
    extended: dict[str, str] = {}
    count = 0
    pos = _skip(_SEPARATORS, header, len(main) + len(semicolon))
    while pos < len(header):
        count += 1
        if count > MAX_PARAMETERS:
            raise ParameterError(f"more than {MAX_PARAMETERS} parameters")
        pos = _read_parameter(header, pos, plain, extended)
        pos = _skip(_SEPARATORS, header, pos)
    return value.lower(), plain | extended


def _read_parameter(header: str, pos: int, plain: dict[str, str], extended: dict[str, str]) -> int:
    """Read the ``name=value`` at ``pos`` and its ending (OWS, then ``;`` or the end of the
    header) into ``plain`` or ``extended``; the position after it."""
    name_match = TOKEN.match(header, pos)
    if name_match is None:
        raise ParameterError(f"expected a parameter name at {_shown(header[pos:])}")
    name = name_match.group().lower()
    pos = name_match.end()
    if not header.startswith("=", pos):
        raise ParameterError(f"parameter {_shown(name)} has no '=' right after its name")
    quoted = _QUOTED.match(header, pos + 1)
    token = None if quoted is not None else TOKEN.match(header, pos + 1)
    if quoted is not None:
        text, pos = _unescape(quoted.group(1)), quoted.end()
    elif token is not None:
        text, pos = token.group(), token.end()
    else:
        raise ParameterError(f"parameter {_shown(name)} has no valid value")
    pos = _skip(_SPACES, header, pos)
    if pos < len(header) and header[pos] != ";":
        raise ParameterError(f"expected ';' after parameter {_shown(name)}")
    _store(name, text, quoted is not None, plain, extended)
    return pos


def _store(
    name: str, text: str, is_quoted: bool, plain: dict[str, str], extended: dict[str, str]
) -> None:
    """File one parameter under ``plain`` (``p=``) or ``extended`` (``p*=``, decoded)."""
    base, star, rest = name.partition("*")
    if rest:
        raise ParameterError(f"parameter {_shown(name)}: RFC 2231 continuations are not supported")
    target = extended if star else plain
    if base in target:
        raise ParameterError(f"parameter {_shown(name)} appears more than once")
    if star:
        if is_quoted:
            raise ParameterError(f"parameter {_shown(name)}: an extended value is not quoted")
        text = _decode_extended(name, text)
    target[base] = text


def _decode_extended(name: str, text: str) -> str:
    """The value of an RFC 8187 ``charset'language'percent-encoded`` text."""
    match = _EXT_VALUE.fullmatch(text)
    if match is None:
        raise ParameterError(
            f"parameter {_shown(name)} is not charset'language'percent-encoded text"
        )
    charset, _language, encoded = match.groups()
    codec = _EXT_CHARSETS.get(charset.lower())
    if codec is None:
        raise ParameterError(
            f"parameter {_shown(name)}: charset {_shown(charset)} is not UTF-8 or ISO-8859-1"
        )
    try:
        text = unquote_to_bytes(encoded).decode(codec)
    except UnicodeDecodeError:
        raise ParameterError(f"parameter {_shown(name)} is not valid {charset}") from None
    if FIELD_CONTROL.search(text):  # what a quoted-string cannot carry, an encoded one may not
        raise ParameterError(f"parameter {_shown(name)} encodes a control character")
    return text
