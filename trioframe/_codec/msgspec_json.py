"""msgspec's JSON writer, when the ``speedups`` extra has installed msgspec; else ``None``. A
shortcut to what the standard library's encoder gives, taken only where a differential test
holds it to that path: ``_codec.writers`` writes a record with ``encode`` once its checks have
found only values that ``encode`` writes as the standard library's encoder does. (Bodies are
read by the standard library: see ``_extract.json_text``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["encode"]

encode: Callable[[Any], bytes] | None
try:
    import msgspec
except ImportError:  # the extra is not installed: the standard library's path alone
    encode = None
else:
    encode = msgspec.json.Encoder().encode
