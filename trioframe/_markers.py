"""The extractor annotations handlers use.

``Path[T]``, ``Query[T]``, ``HeaderValue[T]``, ``CookieValue[T]``, ``Json[T]``, ``Form[T]``,
``State[T]`` and ``Extension[T]`` are ``typing.Annotated`` aliases: to a type checker
``user_id: Path[int]`` is an ``int``; at runtime the annotation carries a small frozen marker
saying where the value comes from (and an ``Alias``, when given, which key to read).
``Body`` and ``FromRequest`` are classes. Nothing here does any work per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

import attrs

if TYPE_CHECKING:
    from ._request import Request

__all__ = [
    "Alias",
    "Body",
    "CookieValue",
    "Extension",
    "Form",
    "FromRequest",
    "HeaderValue",
    "Json",
    "Marker",
    "Path",
    "Query",
    "State",
]

T = TypeVar("T")


@attrs.frozen
class Marker:
    """Where an ``Annotated`` extractor takes its value from (``source``), and the location
    prefix used in error messages (``path.user_id``, ``query.page``, ``body.name``)."""

    source: str
    location: str


PATH = Marker("path", "path")
QUERY = Marker("query", "query")
JSON = Marker("json", "body")
FORM = Marker("form", "body")
STATE = Marker("state", "state")
EXTENSION = Marker("extension", "extension")
HEADER = Marker("header", "header")
COOKIE = Marker("cookie", "cookie")


def _nonempty(_instance: object, _attribute: object, name: str) -> None:
    if not name:
        raise ValueError("an Alias names a key: it cannot be empty")


@attrs.frozen
class Alias:
    """The key a single value is read under when it is not the Python parameter's name:
    ``page_size: Annotated[Query[int], Alias("page-size")] = 20`` reads ``?page-size=``.
    It applies to a single ``Query[T]`` value, ``HeaderValue[T]`` and ``CookieValue[T]``;
    anywhere else it is a ``ConfigurationError`` at startup."""

    name: str = attrs.field(validator=[attrs.validators.instance_of(str), _nonempty])


Path = Annotated[T, PATH]
"""Route parameters: a scalar (one parameter), a tuple (several, in order), an attrs class
or dataclass whose fields are the parameter names, or ``list[str]``. Failure: 400."""

Query = Annotated[T, QUERY]
"""A record (attrs class, dataclass, ``TypedDict``, pydantic model) or ``dict[str, X]``: the
whole query string. Any other ``T`` (a scalar, ``X | None``, ``list[X]``): the one key named
like the parameter (or its ``Alias``), the parameter's default when absent. Failure: 400."""

HeaderValue = Annotated[T, HEADER]
"""One request header, named like the parameter with ``_`` as ``-`` (or its ``Alias``),
case-insensitive: its first value, or every value for ``list[X]``. Absent: the parameter's
default, ``None`` for ``X | None``, else 400."""

CookieValue = Annotated[T, COOKIE]
"""One cookie, named like the parameter (or its ``Alias``). Absent: the parameter's default,
``None`` for ``X | None``, else 400."""

Json = Annotated[T, JSON]
"""The body as JSON (``application/json`` or ``+json``) into any cattrs-structurable type.
Failure: 415 wrong content type, 400 malformed, 422 not fitting ``T``, 413 too large."""

Form = Annotated[T, FORM]
"""The body as ``application/x-www-form-urlencoded``, like ``Query``. Failure: 415/400/422."""

State = Annotated[T, STATE]
"""The value registered with ``Router.state`` whose type is ``T`` (or a subclass)."""

Extension = Annotated[T, EXTENSION]
"""The per-request value of type ``T`` a middleware inserted into ``request.extensions``;
missing at request time → 500."""


class Body(bytes):
    """The raw request body (a ``bytes`` subclass); reading it counts against
    ``max_body_size``."""

    __slots__ = ()


class StreamedBody:
    """Base class of extractors that stream the request body instead of buffering it
    (``Multipart``). A parameter annotated with a subclass gets ``cls(request, config)``,
    ``config`` being the route's ``MultipartConfig``, whose ``max_total_size`` replaces the
    body limit. The planner knows only this base class: the streaming classes live in the
    application layer, which may do I/O."""

    __slots__ = ()


class FromRequest:
    """Base class for custom extractors. Subclasses define::

        @classmethod
        async def from_request(cls, request: Request, db: State[Db], ...) -> Self: ...

    (a plain classmethod works too). The parameters after ``request`` are extractors the
    handler's plan fills (other ``FromRequest`` classes included); each class is resolved at
    most once per request, so the handler and every dependency share its value. Raising
    ``Error`` answers the request with it. Cancellation: ``from_request`` runs in the
    request's task and may be cancelled at any checkpoint, like the handler."""

    is_trioframe_extractor: ClassVar[bool] = True

    @classmethod
    def from_request(cls, request: Request, *args: Any, **dependencies: Any) -> Any:
        """Build the value for ``request``; ``dependencies`` are the extractor-annotated
        parameters a subclass declares (``*args`` is there so that type checkers accept
        any such parameters in an override). Subclasses must override it."""
        raise NotImplementedError(f"{cls.__name__} must define from_request")
