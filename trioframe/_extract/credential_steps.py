"""Credentials: the steps reading ``BearerToken``, ``BasicCredentials`` and ``APIKey``
parameters, and their ``ParamInfo``.

Everything is decided when the handler is planned: which credential, the challenge its 401
carries, the fallback of an optional one (``X | None``, or a default). Per request a step
looks up one header, cookie or query key and checks its syntax; it never sends a credential
back in an error.

Absent, and for ``Authorization`` also a request using another scheme (so that one handler
may take ``BearerToken | None`` and ``BasicCredentials | None``), gives the fallback, or a
401 without one. A credential that is present but malformed is a 401 either way.
"""

from __future__ import annotations

import base64
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

import attrs

from .._codec.check import type_name
from .._codec.constraints import constraint_items
from .._errors import Error, Unauthorized
from .._markers import Alias, Marker
from .._request import Request
from .context import Step, StepContext
from .credentials import BASIC, APIKey, BasicCredentials, HTTPAuth, Realm
from .params import MISSING, ParamInfo
from .sources import strip_error

__all__ = ["credential_info", "credential_step", "is_credential"]

#: RFC 6750's ``b64token`` (RFC 7235's ``token68``).
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_AUTHORIZATION = b"authorization"
_DEFAULT_REALM = "api"


@attrs.frozen
class _Found:
    """What a credential annotation asks for: the ``marker`` (``BASIC`` for a bare
    ``BasicCredentials``), the type written (``one``), and whether ``None`` is allowed."""

    marker: HTTPAuth | APIKey
    one: Any
    optional: bool


def _find(annotation: Any) -> _Found | None:
    """The credential ``annotation`` (``| None`` and ``| Error`` allowed) asks for, if any."""
    members: tuple[Any, ...] = (annotation,)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = strip_error(typing.get_args(annotation))
    rest = [member for member in members if member is not type(None)]
    if len(rest) != 1:
        return None
    one, optional = rest[0], len(rest) < len(members)
    if one is BasicCredentials:
        return _Found(BASIC, one, optional)
    if typing.get_origin(one) is not Annotated:
        return None
    metadata = one.__metadata__
    markers = [meta for meta in metadata if isinstance(meta, HTTPAuth | APIKey)]
    if not markers and typing.get_args(one)[0] is BasicCredentials:
        # Annotated[BasicCredentials, Realm("admin")]; Json[BasicCredentials] is a body
        markers = [] if any(isinstance(meta, Marker) for meta in metadata) else [BASIC]
    return _Found(markers[0], one, optional) if markers else None


def is_credential(annotation: Any) -> bool:
    """Whether ``annotation`` is a ``BearerToken``, ``BasicCredentials`` or ``APIKey``
    parameter (optionally ``| None``, ``| Error``)."""
    return _find(annotation) is not None


def _written(marker: HTTPAuth | APIKey) -> str:
    if isinstance(marker, APIKey):
        return f"APIKey({marker.location}={marker.name!r})"
    return "BearerToken" if marker.scheme == "Bearer" else "BasicCredentials"


def _challenge(ctx: StepContext, found: _Found) -> str:
    """The ``WWW-Authenticate`` value of the 401; raises ``ConfigurationError`` for an
    annotation that mixes the credential with what cannot apply to it."""
    marker, one = found.marker, found.one
    written = _written(marker)
    metadata = getattr(one, "__metadata__", ())
    value = typing.get_args(one)[0] if metadata else one
    wanted = BasicCredentials if marker == BASIC else str
    if value is not wanted:
        raise ctx.fail(f"{written} gives a {wanted.__name__}, not {type_name(value)}")
    if sum(isinstance(meta, HTTPAuth | APIKey) for meta in metadata) > 1:
        raise ctx.fail(f"{written}: a parameter takes one credential")
    if any(isinstance(meta, Marker | Alias) for meta in metadata) or constraint_items(one):
        raise ctx.fail(
            f"{written} reads the credential itself: no other extractor, Alias or constraint"
        )
    realms = [meta.name for meta in metadata if isinstance(meta, Realm)]
    if isinstance(marker, APIKey):
        if realms:
            raise ctx.fail(f"{written}: a Realm applies to BearerToken and BasicCredentials")
        return "APIKey"
    if len(realms) > 1:
        raise ctx.fail(f"{written}: one Realm at most")
    if marker == BASIC:
        return f'Basic realm="{realms[0] if realms else _DEFAULT_REALM}", charset="UTF-8"'
    return f'Bearer realm="{realms[0]}"' if realms else "Bearer"


def credential_info(ctx: StepContext, annotation: Any) -> ParamInfo:
    """The ``ParamInfo`` of a credential parameter: source ``security``, its wire name
    (``authorization`` or the API key's), its ``SecurityScheme``; required unless it has a
    default or is ``X | None``."""
    found = _find(annotation)
    assert found is not None
    marker = found.marker
    value = BasicCredentials if marker == BASIC else str
    return ParamInfo(
        source="security",
        name=marker.name if isinstance(marker, APIKey) else "authorization",
        type=value | None if found.optional else value,
        required=ctx.default is MISSING and not found.optional,
        default=ctx.default,
        dependency=ctx.dependency,
        security=marker.security(),
        parameter=ctx.parameter,
    )


def credential_step(ctx: StepContext, annotation: Any) -> Step:
    """The step giving a credential parameter its value. Raises ``ConfigurationError`` for a
    credential given another type (``BearerToken`` is a ``str``), combined with another
    extractor, an ``Alias``, a constraint or a second credential, or an ``APIKey`` with a
    ``Realm``."""
    found = _find(annotation)
    assert found is not None
    headers = {"WWW-Authenticate": _challenge(ctx, found)}
    fallback = ctx.default
    if fallback is MISSING and found.optional:
        fallback = None
    marker = found.marker
    where = (
        f"{marker.location}.{marker.name}" if isinstance(marker, APIKey) else "header.authorization"
    )

    def refused(reason: str) -> Error:
        return Unauthorized("not authenticated", headers=headers, errors=[f"{where}: {reason}"])

    def absent(reason: str = "required") -> Any:
        if fallback is MISSING:
            raise refused(reason)
        return fallback

    if isinstance(marker, APIKey):
        read = _key_reader(marker)

        async def api_key(request: Request) -> Any:
            key = read(request)
            if key is None:
                return absent()
            if not key:
                raise refused("expected a non-empty key")
            return key

        return api_key
    prefix = marker.scheme.lower()
    decode = _basic if marker == BASIC else _bearer

    async def authorization(request: Request) -> Any:
        for name, value in request.headers.raw:
            if name == _AUTHORIZATION:
                scheme, _, credentials = value.decode("latin-1").partition(" ")
                if scheme.lower() != prefix:
                    return absent(f"expected the {marker.scheme} scheme")
                try:
                    return decode(credentials.lstrip(" "))
                except ValueError as exc:
                    raise refused(str(exc)) from None
        return absent()

    return authorization


def _bearer(token: str) -> str:
    """The token of a Bearer ``Authorization``; ``ValueError`` when it is not a b64token."""
    if not _TOKEN68.fullmatch(token):
        raise ValueError("expected a Bearer token")
    return token


def _basic(encoded: str) -> BasicCredentials:
    """The credentials of a Basic ``Authorization`` (RFC 7617); ``ValueError`` saying what is
    wrong with them."""
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except ValueError:  # binascii.Error, and non-ASCII text
        decoded = b""
    if not decoded or base64.b64encode(decoded) != encoded.encode("ascii"):  # canonical only
        raise ValueError("expected base64 Basic credentials")
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("expected UTF-8 Basic credentials") from None
    username, colon, password = text.partition(":")
    if not colon:
        raise ValueError("expected Basic credentials user-id:password")
    if _CONTROL.search(text):
        raise ValueError("expected Basic credentials without control characters")
    return BasicCredentials(username, password)


def _key_reader(key: APIKey) -> Callable[[Request], str | None]:
    """What gives the raw text of an API key, ``None`` when absent: a header's first value,
    a cookie, a query key's last value (as ``HeaderValue``, ``CookieValue``, ``Query`` do)."""
    name = key.name
    if key.location == "cookie":
        return lambda request: request.cookies().get(name)
    if key.location == "query":
        return lambda request: request.query_params.get(name)
    raw = name.encode("latin-1")

    def header_value(request: Request) -> str | None:
        for k, v in request.headers.raw:
            if k == raw:
                return v.decode("latin-1")
        return None

    return header_value
