"""``Protocols``: what the server speaks on a connection: the HTTP/1.1 parser, HTTP/2 and
TLS, and how long the TLS handshake may take."""

from __future__ import annotations

import ssl
from typing import Any

import attrs

from ..tls import SelfSigned, TLSFiles
from .checks import positive

__all__ = ["HTTP1_PARSERS", "Protocols"]

#: the values ``ServerConfig.http1_parser`` takes
HTTP1_PARSERS = ("auto", "h11", "llhttp")


def _tls_setting(value: Any) -> TLSFiles | SelfSigned | ssl.SSLContext | None:
    if isinstance(value, tuple):  # (cert_file, key_file)
        return TLSFiles(*value)
    return value  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class Protocols:
    """Protocol choice and TLS."""

    #: The HTTP/1.1 parser: ``"h11"``, ``"llhttp"`` (the ``speedups`` extra) or ``"auto"``
    #: (the default: llhttp when the extra is installed, else h11); both are held to the
    #: same strictness.
    http1_parser: str = attrs.field(default="auto", validator=attrs.validators.in_(HTTP1_PARSERS))
    #: HTTP/2 (default False): ALPN ``h2`` on TLS, prior-knowledge h2c on cleartext.
    http2: bool = False
    #: HTTPS: certificate files (``TLSFiles``; a ``(cert_file, key_file)`` tuple is accepted),
    #: a development certificate (``SelfSigned``) or an ``ssl.SSLContext``; ``None`` (the
    #: default): plain HTTP.
    tls: TLSFiles | SelfSigned | ssl.SSLContext | None = attrs.field(
        default=None, converter=_tls_setting
    )
    #: Longest a TLS handshake may take, in seconds (default 10); then the connection is
    #: closed (a client that connects and sends nothing is closed).
    tls_handshake_timeout: float = attrs.field(default=10.0, validator=positive)
