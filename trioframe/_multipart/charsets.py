"""Which charsets ``Field.text()`` decodes: a fixed set of text encodings whose Python
decoders run in linear time.

The client names the charset (``Content-Type: text/plain; charset=...``), so it is never
handed to the codec machinery as it is: a codec such as ``punycode`` decodes in quadratic
time, others (``rot13``, ``zlib``, ``base64``) are not text encodings at all, and every
unknown name looked up is remembered by ``encodings`` for the life of the process. The name
is first mapped to a codec the way Python's codec registry does it (``normalize_encoding``
then the ``encodings.aliases`` table, so ``UTF8``, ``utf_8``, ``Latin-1``, ``us-ascii`` and
``windows-1252`` all work) and only codecs in ``TEXT_CODECS`` are accepted.
"""

from __future__ import annotations

import encodings
from encodings.aliases import aliases

__all__ = ["TEXT_CODECS", "text_codec"]

_ISO_8859 = {f"iso8859_{n}" for n in range(2, 17) if n != 12}  # there is no ISO-8859-12
_WINDOWS = {f"cp125{n}" for n in range(9)}
_CJK = {"shift_jis", "euc_jp", "iso2022_jp", "gbk", "gb2312", "gb18030", "big5", "euc_kr"}

#: Python codec names ``Field.text()`` accepts: Unicode, ASCII, the ISO-8859 and Windows
#: single-byte sets, KOI8, and the common CJK multibyte sets.
TEXT_CODECS = frozenset(
    {"utf_8", "utf_16", "utf_16_le", "utf_16_be", "ascii", "latin_1", "koi8_r", "koi8_u"}
    | _ISO_8859
    | _WINDOWS
    | _CJK
)


def text_codec(charset: str) -> str | None:
    """The Python codec for ``charset`` when it is one of ``TEXT_CODECS``, else ``None``."""
    normalized = encodings.normalize_encoding(charset.lower())
    codec = aliases.get(normalized, normalized)
    return codec if codec in TEXT_CODECS else None
