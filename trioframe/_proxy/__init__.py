"""Trusting reverse proxies: who the client is behind them (``Forwarded``, ``X-Forwarded-*``, the PROXY protocol)."""

from __future__ import annotations

from .forwarded import Forwarded, TrustedProxies, resolve_forwarded
from .proxy_protocol import (
    V1_MAX,
    V2_SIGNATURE,
    ProxyHeader,
    ProxyProtocolError,
    header_length,
    parse_header,
)

__all__ = [
    "V1_MAX",
    "V2_SIGNATURE",
    "Forwarded",
    "ProxyHeader",
    "ProxyProtocolError",
    "TrustedProxies",
    "header_length",
    "parse_header",
    "resolve_forwarded",
]
