"""``Request`` (what a handler sees) and ``Extensions`` (per-request typed values).

Application layer: may use trio primitives, never sockets or streams. The body arrives
through a ``BodySource`` the server provides; it is read here only when asked for.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

import attrs

from ._errors import BadRequest
from ._http.cookies import CookieJar, header_text
from ._http.headers import Headers
from ._http.method import Method
from ._http.url import Uri, parse_query

__all__ = ["BodyReader", "Extensions", "Request"]

T = TypeVar("T")

#: ``await reader()`` returns the next chunk of the request body, ``b""`` at its end.
BodyReader = Callable[[], Awaitable[bytes]]


class Extensions:
    """Per-request values keyed by their type: ``insert(value)``, ``get(T)``, ``[T]``.

    ``get(T)`` finds a value of exactly type ``T`` first, then one of a subclass."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[type[Any], Any] = {}

    def insert(self, value: object) -> None:
        """Store ``value`` under its type, replacing a previous value of that type."""
        self._values[type(value)] = value

    @overload
    def get(self, kind: type[T]) -> T | None: ...
    @overload
    def get(self, kind: type[T], default: T) -> T: ...
    def get(self, kind: type[T], default: T | None = None) -> T | None:
        """The value of type ``kind`` (or a subclass), else ``default``."""
        value = self._values.get(kind)
        if value is not None:
            return value  # type: ignore[no-any-return]
        for stored_type, stored in self._values.items():
            if issubclass(stored_type, kind):
                return stored  # type: ignore[no-any-return]
        return default

    def __getitem__(self, kind: type[T]) -> T:
        value = self.get(kind)
        if value is None:
            raise KeyError(kind)
        return value

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, type) and self.get(kind) is not None

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Extensions({list(self._values.values())!r})"


async def _no_body() -> bytes:
    return b""


@attrs.define(eq=False, slots=False)
class Request:
    """An incoming HTTP request.

    ``body`` holds the whole body when the handler takes a ``Request`` (it is read before the
    handler runs); otherwise it is ``b""`` and the body stays unread. ``query_params`` maps
    each name to its last value; ``query_list(name)`` gives all of them.
    """

    method: Method
    uri: Uri
    version: str = "1.1"
    headers: Headers = attrs.field(factory=Headers)
    body: bytes = b""
    params: dict[str, str] = attrs.field(factory=dict)
    extensions: Extensions = attrs.field(factory=Extensions)
    client: tuple[str, int] | None = None
    scheme: str = "http"
    body_reader: BodyReader = attrs.field(default=_no_body, repr=False)
    body_consumed: bool = attrs.field(default=False, repr=False)
    #: The body size limit for this request and the setting it comes from (set by the app
    #: once the route is known: ``max_body_size``, or ``max_total_size`` for ``Multipart``).
    body_limit: tuple[int, str] | None = attrs.field(default=None, repr=False)
    #: The declared ``Content-Length`` as the protocol layer parsed it (``None``: absent).
    content_length: int | None = attrs.field(default=None, repr=False)

    @functools.cached_property
    def query_pairs(self) -> list[tuple[str, str]]:
        """Every decoded ``(name, value)`` pair of the query string, in order. Raises
        ``BadRequest`` (400) for invalid percent-encoding or UTF-8, or over 1000 fields."""
        try:
            return parse_query(self.uri.query)
        except ValueError as exc:
            raise BadRequest(f"invalid query string: {exc}") from None

    @functools.cached_property
    def query_params(self) -> dict[str, str]:
        """Query parameters by name (the last value wins)."""
        return dict(self.query_pairs)

    def query_list(self, name: str) -> list[str]:
        """All values of the query parameter ``name``, in order."""
        return [v for k, v in self.query_pairs if k == name]

    @property
    def path(self) -> str:
        """The percent-decoded path (shortcut for ``request.uri.path``)."""
        return self.uri.path

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        return self.headers.get(name)

    def param(self, name: str) -> str | None:
        """The route parameter ``name``, or ``None``."""
        return self.params.get(name)

    def query(self, name: str) -> str | None:
        """The query parameter ``name`` (last value), or ``None``."""
        return self.query_params.get(name)

    @functools.cached_property
    def _cookie_jar(self) -> CookieJar:
        return CookieJar.parse(header_text(v) for k, v in self.headers.raw if k == b"cookie")

    def cookies(self) -> CookieJar:
        """The request's cookies, from every ``Cookie`` header (parsed once, then cached)."""
        return self._cookie_jar

    def cookie(self, name: str) -> str | None:
        """The value of cookie ``name``, or ``None``."""
        return self._cookie_jar.get(name)

    async def read_body(self, on_chunk: Callable[[bytes], object] | None = None) -> bytes:
        """Read the whole body (once; later calls return the same bytes). ``on_chunk``, when
        given, sees each chunk as it arrives (the whole body at once if it was read before):
        a parser can do its work a chunk at a time, between reads; what it raises stops the
        read.

        Cancellation: a checkpoint while the body is still arriving. If cancelled, the body
        is left partly read and the connection will not be reused."""
        if self.body_consumed:
            if on_chunk is not None and self.body:
                on_chunk(self.body)
            return self.body
        chunks: list[bytes] = []
        while chunk := await self.body_reader():
            if on_chunk is not None:
                on_chunk(chunk)
            chunks.append(chunk)
        self.body = b"".join(chunks)
        self.body_consumed = True
        return self.body
