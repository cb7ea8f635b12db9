"""Which HTTP/1.1 adapter serves a connection: ``ServerConfig.http1_parser``."""

from __future__ import annotations

from .._errors import ConfigurationError
from .http1 import HTTP1Adapter
from .http1_base import BaseHTTP1Adapter

__all__ = ["adapter_class"]


def adapter_class(parser: str) -> type[BaseHTTP1Adapter]:
    """The adapter for ``parser``: ``"h11"``; ``"llhttp"`` (the ``speedups`` extra; a
    ``ConfigurationError`` naming the extra when httptools is missing); ``"auto"``: llhttp
    when the extra is installed, else h11."""
    if parser == "h11":
        return HTTP1Adapter
    try:
        from .http1_llhttp import LLHTTPAdapter
    except ImportError:
        if parser == "llhttp":
            raise ConfigurationError(
                "http1_parser='llhttp' needs httptools: pip install 'trioframe[speedups]'"
            ) from None
        return HTTP1Adapter
    return LLHTTPAdapter
