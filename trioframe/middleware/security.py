"""``SecurityHeadersMiddleware``: the usual hardening headers, without overriding handlers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._errors import ConfigurationError

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request
    from .._response import Response

__all__ = ["DEFAULT_HSTS", "SecurityHeadersMiddleware"]

#: The ``Strict-Transport-Security`` value ``hsts=True`` sends (one year, subdomains too).
DEFAULT_HSTS = "max-age=31536000; includeSubDomains"

_FRAME_OPTIONS = frozenset(("DENY", "SAMEORIGIN"))
_REFERRER_POLICIES = frozenset(
    (
        "no-referrer",
        "no-referrer-when-downgrade",
        "origin",
        "origin-when-cross-origin",
        "same-origin",
        "strict-origin",
        "strict-origin-when-cross-origin",
        "unsafe-url",
    )
)
_HSTS = re.compile(r"max-age=\d+(\s*;\s*(includeSubDomains|preload))*", re.IGNORECASE)


class SecurityHeadersMiddleware:
    """Add security headers to every response (framework errors included):

    * ``X-Content-Type-Options: nosniff`` when ``content_type_options`` is true;
    * ``X-Frame-Options: <frame_options>``, ``"DENY"`` or ``"SAMEORIGIN"``;
    * ``Referrer-Policy: <referrer_policy>``, a policy token or a comma-separated fallback
      list of them;
    * ``Strict-Transport-Security`` only when ``request.scheme == "https"`` (browsers ignore
      it over plain HTTP): :data:`DEFAULT_HSTS` for ``hsts=True``, or the given value, e.g.
      ``"max-age=63072000; includeSubDomains; preload"``.

    ``None`` or ``False`` turns a header off. A header the response already has (set by the
    handler or an inner middleware) is never overwritten. Invalid values raise
    ``ConfigurationError`` here.

    Cancellation: holds nothing across ``await next(request)``.
    """

    __slots__ = ("_always", "_hsts")

    def __init__(
        self,
        hsts: bool | str | None = True,
        frame_options: str | None = "DENY",
        referrer_policy: str | None = "strict-origin-when-cross-origin",
        content_type_options: bool = True,
    ) -> None:
        always: list[tuple[bytes, bytes]] = []
        if content_type_options:
            always.append((b"x-content-type-options", b"nosniff"))
        if frame_options:
            if frame_options.upper() not in _FRAME_OPTIONS:
                raise ConfigurationError(
                    f"frame_options must be 'DENY' or 'SAMEORIGIN', not {frame_options!r}"
                )
            always.append((b"x-frame-options", frame_options.upper().encode("ascii")))
        if referrer_policy:
            policies = [p.strip().lower() for p in referrer_policy.split(",")]
            unknown = [p for p in policies if p not in _REFERRER_POLICIES]
            if unknown:
                raise ConfigurationError(f"unknown referrer_policy {', '.join(unknown)!r}")
            always.append((b"referrer-policy", ", ".join(policies).encode("ascii")))
        self._always = tuple(always)
        self._hsts: tuple[bytes, bytes] | None = None
        if hsts is True:
            hsts = DEFAULT_HSTS
        if isinstance(hsts, str):
            if not _HSTS.fullmatch(hsts.strip()):
                raise ConfigurationError(f"invalid Strict-Transport-Security value {hsts!r}")
            self._hsts = (b"strict-transport-security", hsts.strip().encode("ascii"))

    async def __call__(self, request: Request, next: Next) -> Response:
        response = await next(request)
        headers = response.headers
        present = {key for key, _ in headers}
        for pair in self._always:
            if pair[0] not in present:
                headers.append(pair)
        hsts = self._hsts
        if hsts is not None and request.scheme == "https" and hsts[0] not in present:
            headers.append(hsts)
        return response
