"""``CrossOriginProtection``: refuses the cross-origin state-changing requests browsers send on
another site's behalf (cross-site request forgery), from the ``Sec-Fetch-Site`` and ``Origin``
headers, without tokens; see ``docs/pages.md``."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._errors import ConfigurationError
from .._response import Response
from .._routing.pattern import parse_pattern

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request

__all__ = ["CrossOriginProtection"]

#: Methods that must not change state, and so are never refused.
SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))
#: ``Sec-Fetch-Site`` values of a request the user's own page (or the user) started.
_SAME = frozenset(("same-origin", "none"))
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _check_origin(origin: object) -> str:
    """``origin`` when it is an origin exactly as browsers send it, else ``ConfigurationError``."""
    if not isinstance(origin, str):
        raise ConfigurationError(f"CrossOriginProtection: an origin must be a str: {origin!r}")
    try:
        parts = urllib.parse.urlsplit(origin)
        port = parts.port
    except ValueError:
        parts, port = None, None
    exact = (
        parts is not None
        and parts.scheme in _DEFAULT_PORTS
        and bool(parts.hostname)
        and parts.username is None
        and parts.password is None
        and f"{parts.scheme}://{parts.netloc}" == origin
        and origin == origin.lower()
        and port != _DEFAULT_PORTS[parts.scheme]
    )
    if not exact:
        raise ConfigurationError(
            f"CrossOriginProtection: {origin!r} is not an origin as browsers send it: "
            "http:// or https://, a lower-case host, a port only when not the default, "
            "no path and no trailing slash (e.g. 'https://app.example:8443')"
        )
    return origin


def _check_bypass(pattern: object) -> str:
    if not isinstance(pattern, str):
        raise ConfigurationError(
            f"CrossOriginProtection: a bypass pattern must be a str: {pattern!r}"
        )
    parse_pattern(pattern)  # ConfigurationError naming what is wrong
    return pattern


def _several(values: Iterable[str], what: str) -> list[str]:
    if isinstance(values, str):
        raise ConfigurationError(
            f"CrossOriginProtection: give a list of {what}, not the string {values!r}"
        )
    return list(values)


def _refused(reason: str) -> Response:
    return Response.error(403, f"cross-origin request refused: {reason}")


class CrossOriginProtection:
    """Refuse (403 with the standard error body) a ``POST``, ``PUT``, ``PATCH``, ``DELETE``
    or other unsafe request that a browser sent from another origin:

    * its ``Sec-Fetch-Site`` is present and neither ``same-origin`` nor ``none`` (a request
      the user typed or bookmarked), so ``same-site`` and ``cross-site`` are refused; or
    * it has no ``Sec-Fetch-Site`` (an older browser, or a plain-HTTP page that is not a
      secure context) but an ``Origin`` whose ``host[:port]`` is not the request's
      ``Host`` (compared without regard to case; ``Origin: null`` never matches).

    ``GET``, ``HEAD`` and ``OPTIONS`` always pass (they must not change state), and so does
    a request with neither header: not a browser, which no other site can make send it.

    ``trusted_origins``: origins whose requests pass, exact as browsers send them
    (``"https://admin.example"``), compared with ``Origin``. ``bypass``: route patterns,
    exactly as registered with their nest prefixes (``"/webhooks/{name}"``), whose requests
    pass: compared with ``request.route``. Either, malformed, is a ``ConfigurationError``.

    Cancellation: holds nothing across ``await next(request)``.
    """

    __slots__ = ("_bypass", "_trusted")

    def __init__(self, trusted_origins: Iterable[str] = (), bypass: Iterable[str] = ()) -> None:
        self._trusted = frozenset(
            _check_origin(o) for o in _several(trusted_origins, "trusted origins")
        )
        self._bypass = frozenset(_check_bypass(p) for p in _several(bypass, "bypass patterns"))

    def refusal(self, request: Request) -> str | None:
        """Why ``request`` is refused, or ``None`` when it may go on."""
        if request.method in SAFE_METHODS:
            return None
        site = request.header("sec-fetch-site")
        origin = request.header("origin")
        if site is not None:
            if site.strip().lower() in _SAME:
                return None
            reason = f"Sec-Fetch-Site is {site!r}"
        elif origin is None:
            return None  # not a browser
        elif _host_of(origin) == request.host.lower() != "":
            return None
        else:
            reason = f"Origin {origin!r} does not match Host {request.host!r}"
        if origin in self._trusted or (request.route is not None and request.route in self._bypass):
            return None
        return reason

    async def __call__(self, request: Request, next: Next) -> Response:
        reason = self.refusal(request)
        if reason is not None:
            return _refused(reason)
        return await next(request)


def _host_of(origin: str) -> str | None:
    """The ``host[:port]`` of a serialized origin, lower-case; ``None`` for ``null`` or
    anything that is not an origin."""
    try:
        parts = urllib.parse.urlsplit(origin.strip())
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc or parts.path:
        return None
    return parts.netloc.lower()
