"""msgspec's JSON reader and writer, when the ``speedups`` extra has installed msgspec; else
``None``. Each is a shortcut to what the standard library's path gives, taken only where a
differential test holds it to that path: ``_extract.json_text`` reads a body with ``decode``
and reads it again by the standard library whenever ``decode`` raises; ``_codec.writers``
writes a record with ``encode`` once its checks have found only values that ``encode`` writes
as the standard library's encoder does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["decode", "encode"]

decode: Callable[[bytes], Any] | None
encode: Callable[[Any], bytes] | None
try:
    import msgspec
except ImportError:  # the extra is not installed: the standard library's path alone
    decode = None
    encode = None
else:
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode
