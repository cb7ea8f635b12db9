"""``Cors`` (a builder) and ``CorsMiddleware``: the server side of the Fetch standard's CORS
protocol (https://fetch.spec.whatwg.org/#http-cors-protocol)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Self

from .._errors import ConfigurationError
from .._http.grammar import TOKEN
from .._http.method import Method
from .._response import Response
from ._headers import add_vary, request_header, set_header

if TYPE_CHECKING:
    from .._chain import Next
    from .._request import Request

__all__ = ["Cors", "CorsMiddleware"]

# A serialized tuple origin: lower-case scheme and host, a port only when not the default.
_ORIGIN = re.compile(r"[a-z][a-z0-9+.\-]*://(\[[0-9a-f:.]+\]|[a-z0-9\-._~%!$&'()*+,;=]+)(:\d+)?")
_DEFAULT_PORTS = {"http": ":80", "https": ":443", "ws": ":80", "wss": ":443"}
_SAFELISTED_METHODS = (Method.GET, Method.HEAD, Method.POST)
_KNOWN_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"))

_ALLOW_ORIGIN = b"access-control-allow-origin"
_ANY = (_ALLOW_ORIGIN, b"*")
_CREDENTIALS = (b"access-control-allow-credentials", b"true")
_PREFLIGHT_VARY = (
    b"vary",
    b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
)


def _check_origin(origin: object) -> bytes:
    if not isinstance(origin, str):
        raise ConfigurationError(f"Cors: an origin must be a str, not {origin!r}")
    if origin == "*":
        raise ConfigurationError("Cors: use allow_any_origin() instead of the origin '*'")
    if origin != "null":
        match = _ORIGIN.fullmatch(origin)
        scheme = origin.partition(":")[0]
        if match is None or match.group(2) == _DEFAULT_PORTS.get(scheme):
            raise ConfigurationError(
                f"Cors: {origin!r} is not an origin as browsers send it: scheme://host[:port], "
                "lower-case, no default port, no path and no trailing slash"
            )
    return origin.encode("ascii")


def _check_token(name: object, what: str) -> str:
    if not isinstance(name, str) or not TOKEN.fullmatch(name):
        raise ConfigurationError(f"Cors: invalid {what} {name!r}")
    return name


def _names(values: Iterable[str], what: str) -> list[str]:
    if isinstance(values, str):
        raise ConfigurationError(f"Cors: give a list of {what}s, not the string {values!r}")
    return list(values)


class Cors:
    """Build a :class:`CorsMiddleware`; every method returns the builder::

        cors = (
            Cors()
            .allowed_origins(["https://app.example"])
            .allowed_methods([Method.GET, Method.POST, Method.DELETE])
            .allowed_headers(["content-type", "authorization"])
            .allow_credentials()
            .max_age(600)
            .build()
        )

    ``allowed_origins``, ``allowed_methods``, ``allowed_headers`` and ``expose_headers`` add to
    what earlier calls gave. Values are checked by :meth:`build`.
    """

    def __init__(self) -> None:
        self._any = False
        self._origins: list[str] = []
        self._methods: list[str] | None = None
        self._headers: list[str] = []
        self._expose: list[str] = []
        self._credentials = False
        self._max_age: int | None = None

    def allow_any_origin(self) -> Self:
        """Allow every origin except ``null`` (answered with ``*``; no credentials)."""
        self._any = True
        return self

    def allowed_origins(self, origins: Iterable[str]) -> Self:
        """Allow these exact origins (``"https://app.example"``, ``"http://localhost:3000"``;
        ``"null"`` only if listed). Comparison is exact and case-sensitive, as browsers
        serialize origins: lower-case scheme and host, no default port, no trailing slash."""
        self._origins.extend(_names(origins, "origin"))
        return self

    def allowed_methods(self, methods: Iterable[Method | str]) -> Self:
        """Methods a preflight may ask for (``Method`` constants or names; case-sensitive).
        Default: ``GET``, ``HEAD``, ``POST``."""
        self._methods = [*(self._methods or ()), *_names(methods, "method")]
        return self

    def allowed_headers(self, names: Iterable[str]) -> Self:
        """Request header names a preflight may ask for (case-insensitive). Default: none.
        Browsers ask for ``content-type`` when it is not a form or text type (JSON)."""
        self._headers.extend(_names(names, "header name"))
        return self

    def expose_headers(self, names: Iterable[str]) -> Self:
        """Response headers the page's script may read (``Access-Control-Expose-Headers``)."""
        self._expose.extend(_names(names, "header name"))
        return self

    def allow_credentials(self) -> Self:
        """Allow cookies and HTTP authentication (``Access-Control-Allow-Credentials: true``);
        needs explicit origins."""
        self._credentials = True
        return self

    def max_age(self, seconds: int) -> Self:
        """How long a browser may cache a preflight answer (``Access-Control-Max-Age``)."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
            raise ConfigurationError(f"Cors: max_age needs whole seconds >= 0, not {seconds!r}")
        self._max_age = seconds
        return self

    def build(self) -> CorsMiddleware:
        """The middleware. Raises ``ConfigurationError`` when no origin rule was set, for
        credentials with any origin (the Fetch standard refuses ``*`` with credentials, and
        echoing every origin would hand any site the user's cookies), and for malformed
        origins, methods or header names."""
        if not self._any and not self._origins:
            raise ConfigurationError("Cors: call allow_any_origin() or allowed_origins([...])")
        if self._any and self._credentials:
            raise ConfigurationError(
                "Cors: allow_credentials() needs explicit allowed_origins([...]), "
                "not allow_any_origin()"
            )
        origins = frozenset(_check_origin(origin) for origin in self._origins)
        methods: list[str] = []
        for method in self._methods if self._methods is not None else _SAFELISTED_METHODS:
            name = _check_token(method, "method")
            if name != name.upper() and name.upper() in _KNOWN_METHODS:
                raise ConfigurationError(
                    f"Cors: methods are case-sensitive: did you mean {name.upper()!r}?"
                )
            if name not in methods:
                methods.append(name)
        headers = {_check_token(h, "header name").lower() for h in self._headers}
        if "*" in headers:
            raise ConfigurationError("Cors: list the allowed header names; '*' is not supported")
        expose = list(dict.fromkeys(_check_token(h, "header name").lower() for h in self._expose))
        return CorsMiddleware(
            any_origin=self._any,
            origins=origins,
            methods=methods,
            headers=headers,
            expose=expose,
            credentials=self._credentials,
            max_age=self._max_age,
        )


class CorsMiddleware:
    """Answers CORS preflights and adds CORS headers to responses; made by :meth:`Cors.build`.

    * A request without ``Origin`` is passed through; its response only gets ``Vary: Origin``
      (so a shared cache does not hand it to a cross-origin request, as the Fetch standard's
      "CORS protocol and HTTP caches" section asks).
    * A preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) never
      reaches routing: an allowed origin, method and set of requested headers get 204 with
      ``Access-Control-Allow-Origin``, ``-Allow-Methods``, ``-Allow-Headers`` (the requested
      names), ``-Max-Age`` and ``-Allow-Credentials`` as configured; anything else gets 403
      with the standard error body and no CORS headers. Both vary on ``Origin``,
      ``Access-Control-Request-Method`` and ``Access-Control-Request-Headers``.
    * Any other request from an allowed origin gets, on whatever response the chain produced
      (errors included), ``Access-Control-Allow-Origin`` (``*`` for any origin, else the
      origin echoed), ``Vary: Origin`` added to existing ``Vary`` values, and
      ``Access-Control-Expose-Headers`` and ``-Allow-Credentials`` as configured. A
      disallowed origin gets the response without CORS headers (the browser then hides it).

    Cancellation: holds nothing across ``await next(request)``; a cancelled request passes
    through untouched.
    """

    __slots__ = ("_any", "_extra", "_headers", "_methods", "_origins", "_preflight")

    def __init__(
        self,
        *,
        any_origin: bool,
        origins: frozenset[bytes],
        methods: list[str],
        headers: set[str],
        expose: list[str],
        credentials: bool,
        max_age: int | None,
    ) -> None:
        self._any = any_origin
        self._origins = origins
        self._methods = frozenset(m.encode("ascii") for m in methods)
        self._headers = frozenset(h.encode("ascii") for h in headers)
        extra: list[tuple[bytes, bytes]] = []
        if expose:
            extra.append((b"access-control-expose-headers", ", ".join(expose).encode("ascii")))
        preflight = [(b"access-control-allow-methods", ", ".join(methods).encode("ascii"))]
        if max_age is not None:
            preflight.append((b"access-control-max-age", b"%d" % max_age))
        if credentials:
            extra.append(_CREDENTIALS)
            preflight.append(_CREDENTIALS)
        self._extra = tuple(extra)
        self._preflight = tuple(preflight)

    def _allows(self, origin: bytes) -> bool:
        return origin in self._origins or (self._any and origin != b"null")

    async def __call__(self, request: Request, next: Next) -> Response:
        origin = request_header(request, b"origin")
        if origin is None:
            response = await next(request)
            add_vary(response, b"Origin")
            return response
        if request.method == Method.OPTIONS:
            asked = request_header(request, b"access-control-request-method")
            if asked is not None:
                return self._answer_preflight(request, origin, asked)
        response = await next(request)
        add_vary(response, b"Origin")
        if self._allows(origin):
            set_header(response, _ALLOW_ORIGIN, b"*" if self._any else origin)
            for name, value in self._extra:
                set_header(response, name, value)
        return response

    def _answer_preflight(self, request: Request, origin: bytes, method: bytes) -> Response:
        if not self._allows(origin):
            return _refuse("origin is not allowed")
        if method not in self._methods:
            return _refuse(f"method {method.decode('latin-1')} is not allowed")
        asked = request_header(request, b"access-control-request-headers")
        names: list[bytes] = []
        if asked is not None:
            for item in asked.split(b","):
                name = item.strip().lower()
                if not name:
                    continue
                if name not in self._headers:
                    return _refuse(f"header {name.decode('latin-1')} is not allowed")
                names.append(name)
        headers = [_ANY if self._any else (_ALLOW_ORIGIN, origin), *self._preflight]
        if names:
            headers.append((b"access-control-allow-headers", b", ".join(names)))
        headers.append(_PREFLIGHT_VARY)
        return Response(204, b"", headers)


def _refuse(reason: str) -> Response:
    response = Response.error(403, f"CORS preflight refused: {reason}")
    response.headers.append(_PREFLIGHT_VARY)
    return response
