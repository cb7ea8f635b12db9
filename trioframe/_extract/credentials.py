"""The credential extractors handlers use, and how ``ParamInfo`` describes them.

``BearerToken`` is ``Annotated[str, HTTPAuth("Bearer")]``: to a type checker ``token:
BearerToken`` is a ``str``. ``BasicCredentials`` is both the annotation and the value HTTP
Basic gives. An API key is ``Annotated[str, APIKey(header="x-api-key")]`` (or ``cookie=``,
``query=``). ``Realm`` beside ``BearerToken`` or ``BasicCredentials`` names the realm of the
``WWW-Authenticate`` challenge. ``SecurityScheme`` is what ``ParamInfo.security`` records, in
OpenAPI terms. Nothing here does any work per request (``credential_steps`` reads them).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import attrs

from .._http.grammar import TOKEN

__all__ = [
    "APIKey",
    "BasicCredentials",
    "BearerToken",
    "HTTPAuth",
    "Realm",
    "SecurityScheme",
]

#: What an OpenAPI component name may hold; scheme names map anything else to ``_``.
_NOT_IN_COMPONENT_NAME = re.compile(r"[^A-Za-z0-9._-]")
#: What a realm may hold: printable ASCII, no quote or backslash (it is sent as is, quoted).
_REALM = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]+")


@attrs.frozen
class SecurityScheme:
    """A credential a handler (or a dependency) takes, described as an OpenAPI security
    scheme. ``scheme_name`` is the stable name to list it under: ``bearerAuth``,
    ``basicAuth``, or ``apiKey_<in>_<name>`` (``apiKey_header_x-api-key``; characters an
    OpenAPI component name cannot hold become ``_``). ``type`` is ``http`` (with ``scheme``
    ``bearer`` or ``basic``) or ``apiKey`` (with ``location``, OpenAPI's ``in``: ``header``,
    ``cookie`` or ``query``, and ``name``, the header, cookie or query key)."""

    scheme_name: str
    type: Literal["http", "apiKey"]
    scheme: Literal["bearer", "basic"] | None = None
    location: Literal["header", "cookie", "query"] | None = None
    name: str | None = None

    def as_openapi(self) -> dict[str, str]:
        """The OpenAPI Security Scheme Object: ``{"type": "http", "scheme": "bearer"}`` or
        ``{"type": "apiKey", "in": "header", "name": "x-api-key"}``."""
        if self.scheme is not None:
            return {"type": self.type, "scheme": self.scheme}
        return {"type": self.type, "in": str(self.location), "name": str(self.name)}


@attrs.frozen
class HTTPAuth:
    """The marker of an ``Authorization`` scheme: ``Bearer`` (``BearerToken``) or ``Basic``
    (``BasicCredentials``)."""

    scheme: Literal["Bearer", "Basic"]

    def security(self) -> SecurityScheme:
        """How ``ParamInfo.security`` describes this scheme."""
        lower: Literal["bearer", "basic"] = "bearer" if self.scheme == "Bearer" else "basic"
        return SecurityScheme(f"{lower}Auth", "http", scheme=lower)


BEARER = HTTPAuth("Bearer")
BASIC = HTTPAuth("Basic")

BearerToken = Annotated[str, BEARER]
"""The token of ``Authorization: Bearer <token>`` (RFC 6750), a ``str``. Missing, another
scheme or a malformed token: 401 with ``WWW-Authenticate: Bearer``."""


@attrs.frozen
class BasicCredentials:
    """The user-id and password of ``Authorization: Basic <base64>`` (RFC 7617), decoded as
    UTF-8 and split at the first colon. As an annotation (``creds: BasicCredentials``) it is
    the extractor: missing or malformed credentials are a 401 with ``WWW-Authenticate: Basic
    realm="api", charset="UTF-8"``. The password is left out of ``repr``."""

    username: str
    password: str = attrs.field(repr=False)


def _realm(_instance: object, _attribute: object, name: str) -> None:
    if not _REALM.fullmatch(name):
        raise ValueError(f"a Realm is printable ASCII without '\"' or '\\\\', not {name!r}")


@attrs.frozen
class Realm:
    """The realm of the challenge a ``BearerToken`` or ``BasicCredentials`` parameter sends
    with its 401: ``Annotated[BasicCredentials, Realm("admin")]`` challenges with ``Basic
    realm="admin", charset="UTF-8"``. Basic's default is ``"api"``; Bearer names none unless
    given one."""

    name: str = attrs.field(validator=[attrs.validators.instance_of(str), _realm])


@attrs.frozen(kw_only=True)
class APIKey:
    """An API key read from one header, cookie or query key, given as exactly one of
    ``header=``, ``cookie=`` or ``query=``: ``key: Annotated[str, APIKey(header="x-api-key")]``.
    Missing or empty: 401 with ``WWW-Authenticate: APIKey``. Raises ``ValueError`` for none
    or several places, an empty name, or a header name that is not a token."""

    header: str | None = None
    cookie: str | None = None
    query: str | None = None

    def __attrs_post_init__(self) -> None:
        given = [name for name in (self.header, self.cookie, self.query) if name is not None]
        if len(given) != 1:
            raise ValueError("an APIKey is read from exactly one of header=, cookie=, query=")
        if not isinstance(given[0], str) or not given[0]:
            raise ValueError("an APIKey names its header, cookie or query key: a non-empty str")
        if self.header is not None and not TOKEN.fullmatch(self.header):
            raise ValueError(f"APIKey: {self.header!r} is not a header name")

    @property
    def location(self) -> Literal["header", "cookie", "query"]:
        """Where the key is read: ``header``, ``cookie`` or ``query``."""
        if self.header is not None:
            return "header"
        return "cookie" if self.cookie is not None else "query"

    @property
    def name(self) -> str:
        """The key's name on the wire (a header name in lower case)."""
        if self.header is not None:
            return self.header.lower()
        return str(self.cookie if self.cookie is not None else self.query)

    def security(self) -> SecurityScheme:
        """How ``ParamInfo.security`` describes this key."""
        slug = _NOT_IN_COMPONENT_NAME.sub("_", self.name)
        return SecurityScheme(
            f"apiKey_{self.location}_{slug}", "apiKey", location=self.location, name=self.name
        )
