"""The validators and converters the settings groups share, and the size units they use.

A validator's error names the setting as users write it: ``ServerConfig.<name>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

__all__ = ["KiB", "MiB", "optional_strings", "positive", "strings", "window_size"]

KiB = 1024
MiB = 1024 * KiB


def positive(_inst: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    """Refuse zero and negative numbers."""
    if value <= 0:
        raise ValueError(f"ServerConfig.{attribute.name} must be positive, not {value!r}")


def window_size(_inst: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    """Refuse an HTTP/2 flow-control window outside 65535..2**31-1 (RFC 9113, 6.9)."""
    if not 65535 <= value <= 2**31 - 1:
        raise ValueError(f"ServerConfig.{attribute.name} must be in 65535..2**31-1, not {value!r}")


def strings(values: Iterable[str]) -> tuple[str, ...]:
    """Any iterable of strings, kept as a tuple (a frozen config holds no lists)."""
    return tuple(values)


def optional_strings(values: Iterable[str] | None) -> tuple[str, ...] | None:
    """``strings``, with ``None`` kept as ``None``."""
    return None if values is None else tuple(values)
