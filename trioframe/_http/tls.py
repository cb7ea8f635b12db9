"""``TLSInfo``: what a TLS connection negotiated, as ``request.tls`` shows it. A plain value;
the handshake itself is the server's (``trioframe/_server/tls.py``)."""

from __future__ import annotations

import attrs

__all__ = ["TLSInfo"]


@attrs.frozen
class TLSInfo:
    """What a TLS connection negotiated: ``request.tls`` (``None`` on plain HTTP).

    ``version`` is the protocol (``"TLSv1.3"``), ``alpn_protocol`` what ALPN chose (``"h2"``,
    ``"http/1.1"`` or ``None``), ``cipher`` the cipher suite's name. With mutual TLS,
    ``client_certificate`` is the verified client certificate as Python's ``ssl`` module decodes
    it (``subject``, ``issuer``, ``notAfter``, ...) and ``client_certificate_der`` its DER bytes;
    both are ``None`` otherwise."""

    version: str | None
    alpn_protocol: str | None
    cipher: str | None
    client_certificate: dict[str, object] | None = None
    client_certificate_der: bytes | None = None
