"""``Proxies``: which peers are reverse proxies, and what is believed from them
(docs/deployment.md, Proxies). From anyone else the forwarding headers are ignored."""

from __future__ import annotations

import attrs

from .checks import strings

__all__ = ["PROXY_HEADERS", "Proxies"]

#: the values ``ServerConfig.proxy_headers`` takes
PROXY_HEADERS = ("x-forwarded", "forwarded")


@attrs.frozen(kw_only=True)
class Proxies:
    """Trusted proxies, their forwarding headers and the PROXY protocol."""

    #: Addresses, CIDR networks or ``"unix"`` (default none): peers whose forwarding headers
    #: (and PROXY protocol header) set ``request.client``, ``scheme`` and the host. The
    #: chain is walked right to left and stops at the first untrusted hop.
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=strings)
    #: Which forwarding headers trusted proxies send: ``"x-forwarded"`` (the default:
    #: ``X-Forwarded-For``, ``-Proto``, ``-Host``) or ``"forwarded"`` (RFC 7239
    #: ``Forwarded``). Only one family is read: a proxy that sets one usually passes the
    #: client's own copy of the other on.
    proxy_headers: str = attrs.field(
        default="x-forwarded", validator=attrs.validators.in_(PROXY_HEADERS)
    )
    #: Expect a PROXY protocol header (v1 or v2) at the start of every connection from a
    #: trusted proxy (default False); its source address becomes ``request.client``. Needs
    #: ``trusted_proxies`` (``ConfigurationError`` at startup otherwise).
    proxy_protocol: bool = False
