"""``Request`` (what a handler sees) and ``Extensions`` (per-request typed values).

Application layer: may use trio primitives, never sockets or streams. The body arrives
through a ``BodyReader`` over what the server provides; it is read here only when asked for,
and the body size limit (413) is enforced there and nowhere else.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

import attrs

from ._background import BackgroundTasks
from ._errors import BadRequest, PayloadTooLarge
from ._extensions import Extensions
from ._http.cookies import CookieJar, header_text
from ._http.headers import Headers
from ._http.method import Method
from ._http.tls import TLSInfo
from ._http.url import Uri, parse_query
from ._shutdown import Shutdown

__all__ = ["BodyReader", "CancelSource", "PathWriter", "Request", "StateProvider", "find_state"]

T = TypeVar("T")

_NO_STATES: tuple[Any, ...] = ()


class StateProvider:
    """A state entry whose values exist only while the server runs (a lifespan's yielded
    values): ``provided(kind)`` is the value of that class it holds, or ``None``."""

    def provided(self, kind: type[T]) -> T | None:
        raise NotImplementedError


def find_state(states: Iterable[Any], kind: type[T]) -> T | None:
    """The first of ``states`` (outermost router first) that is a ``kind`` or a subclass's
    instance, or that provides one, else ``None``: how :meth:`Request.state` looks state up
    (``State[T]`` plans the same lookup once, in ``_extract/state.state_step``)."""
    for value in states:
        if isinstance(value, StateProvider):
            provided = value.provided(kind)
            if provided is not None:
                return provided
        elif isinstance(value, kind):
            return value
    return None


#: The default body size limit, as ``ServerConfig.max_body_size``.
DEFAULT_BODY_LIMIT = 10 * 1024 * 1024


async def _no_body() -> bytes:
    return b""


def _not_arrived() -> bytes | None:
    return None


class BodyReader:
    """The request body as it arrives: ``await reader()`` returns the next chunk, ``b""`` at
    its end, and raises ``PayloadTooLarge`` (413) once more than the limit has arrived.
    :meth:`take_whole` gives the whole rest of the body at once when it has all arrived.

    ``receive`` is what the server provides (the protocol's body source), ``take_whole`` its
    shortcut for a body that has all arrived (the rest of it, or ``None``); ``declared`` the
    declared ``Content-Length``; ``limit`` the route's own (the route is matched before the
    request is built), named after its ``setting`` in the 413. Cancellation: a checkpoint
    whenever ``receive`` has to wait."""

    __slots__ = (
        "_limit",
        "_receive",
        "_setting",
        "_take_whole",
        "declared",
        "exceeded",
        "received",
    )

    def __init__(
        self,
        receive: Callable[[], Awaitable[bytes]] = _no_body,
        declared: int | None = None,
        limit: int = DEFAULT_BODY_LIMIT,
        setting: str = "max_body_size",
        take_whole: Callable[[], bytes | None] = _not_arrived,
    ) -> None:
        self._receive = receive
        self._take_whole = take_whole
        self._limit = limit
        self._setting = setting
        #: the declared length (``Content-Length``), ``None`` when the body's length is unknown
        self.declared = declared
        #: body bytes received so far
        self.received = 0
        #: more than the limit arrived (the rest of the body is not wanted)
        self.exceeded = False

    def refuse_declared_excess(self) -> None:
        """Raise ``PayloadTooLarge`` now when the declared length is over the limit (before
        anything is read)."""
        if self.declared is not None and self.declared > self._limit:
            raise self._too_large()

    async def __call__(self) -> bytes:
        return self._count(await self._receive())

    def take_whole(self) -> bytes | None:
        """The rest of the body when it has all arrived, else ``None`` (then read it with
        ``await reader()``). Raises ``PayloadTooLarge`` like a read. Never waits."""
        rest = self._take_whole()
        if rest:  # (``_count``, inline: one call less for a body that has all arrived)
            self.received += len(rest)
            if self.received > self._limit:
                self.exceeded = True
                raise self._too_large()
        return rest

    def _count(self, chunk: bytes) -> bytes:
        if chunk:
            self.received += len(chunk)
            if self.received > self._limit:
                self.exceeded = True
                raise self._too_large()
        return chunk

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"request body is larger than {self._setting} ({self._limit} bytes)")


class CancelSource(Protocol):
    """What knows why the server cancels a request's handler (its exchange)."""

    def cancel_cause(self) -> str | None: ...


class PathWriter(Protocol):
    """What builds the paths of an application's named routes (the frozen app's
    ``PathBuilder``)."""

    def path_for(self, name: str, /, **params: Any) -> str: ...


#: ``Request._peer`` until the server sets it (``peer`` is then ``client``).
_SAME_AS_CLIENT: tuple[str, int] | None = None
#: The other values only ``served`` sets (typed here: an annotation in the class would make
#: them attrs fields).
_NO_PATHS: PathWriter | None = None
_NO_NAME: str | None = None
_NO_CANCEL_SOURCE: CancelSource | None = None
_NO_BACKGROUND: BackgroundTasks | None = None


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
    #: The body as it arrives.
    body_reader: BodyReader = attrs.field(factory=BodyReader, repr=False)
    body_consumed: bool = attrs.field(default=False, repr=False)
    #: The declared ``Content-Length`` as the protocol layer parsed it (``None``: absent).
    content_length: int | None = attrs.field(default=None, repr=False)
    #: What TLS negotiated (``None`` on plain HTTP): version, ALPN protocol, client certificate.
    tls: TLSInfo | None = attrs.field(default=None, repr=False)
    #: The ``:protocol`` of an HTTP/2 extended CONNECT (RFC 8441): ``"websocket"`` for a
    #: WebSocket opened over HTTP/2 (``method`` is then ``CONNECT``); ``None`` otherwise.
    connect_protocol: str | None = attrs.field(default=None, repr=False)
    #: The server's graceful-shutdown signal (what the ``Shutdown`` extractor gives);
    #: ``None`` for a request no server is serving.
    shutdown_signal: Shutdown | None = attrs.field(default=None, repr=False)

    # Not fields: set by ``served`` only. The address the connection came from when a trusted
    # proxy named another client (see ``peer``), the state values of the routers that own
    # the matched route, outermost first (see ``state``), the app's route paths (see
    # ``path_for``), the route's pattern and the exchange (see ``cancelled_by``). Class
    # attributes otherwise.
    _peer = _SAME_AS_CLIENT
    _route_states = _NO_STATES
    _paths = _NO_PATHS
    _route = _NO_NAME
    _cancel_source = _NO_CANCEL_SOURCE
    _cancelled_by = _NO_NAME
    #: The request's ``BackgroundTasks``, once a handler or dependency has asked for them
    #: (the server starts them after the response; ``None``: nothing to run).
    background_tasks = _NO_BACKGROUND

    @classmethod
    def served(
        cls,
        method: Method,
        uri: Uri,
        version: str,
        headers: Headers,
        params: dict[str, str],
        client: tuple[str, int] | None,
        scheme: str,
        body_reader: BodyReader,
        body_consumed: bool,
        content_length: int | None,
        tls: TLSInfo | None,
        connect_protocol: str | None,
        shutdown_signal: Shutdown | None,
        peer: tuple[str, int] | None,
        route_states: tuple[Any, ...],
        paths: PathWriter,
        route: str | None = None,
        cancel_source: CancelSource | None = None,
    ) -> Request:
        """The request as the server hands it to the app: built once, from what the
        connection parsed, what the trusted proxies forwarded (``client``, ``scheme``, the
        ``Host`` in ``headers``; ``peer`` the connection's own address), what routing
        matched (``params``, the ``route``'s pattern and its ``route_states``), the app's
        ``paths`` and the exchange (``cancel_source``). Nothing
        changes it afterwards but the body as it is read."""
        # Every field stored here, not through __init__ (one call less per request; the
        # package tests check that no field is missed).
        request = cls.__new__(cls)
        request.method = method
        request.uri = uri
        request.version = version
        request.headers = headers
        request.body = b""
        request.params = params
        request.extensions = Extensions()
        request.client = client
        request.scheme = scheme
        request.body_reader = body_reader
        request.body_consumed = body_consumed
        request.content_length = content_length
        request.tls = tls
        request.connect_protocol = connect_protocol
        request.shutdown_signal = shutdown_signal
        if peer != client:
            request._peer = peer
        request._route_states = route_states
        request._paths = paths
        request._route = route
        request._cancel_source = cancel_source
        return request

    @property
    def cancelled_by(self) -> str | None:
        """Why this request's handler is being cancelled, for the code that catches
        ``trio.Cancelled`` (telemetry, logs): ``"disconnect"`` (the client went away),
        ``"stream_reset"`` (an HTTP/2 client reset the stream), ``"connection_error"`` (the
        HTTP/2 connection failed), ``"shutdown"`` (the grace period is over: 503),
        ``"body_timeout"`` (the body came too slowly: 408), ``"deadline"`` (set by a
        middleware that cancelled the chain on a deadline, such as ``TimeoutMiddleware``);
        ``None`` when none of these is known. Set it from middleware that cancels the rest
        of the chain itself."""
        if self._cancelled_by is not None:
            return self._cancelled_by
        source = self._cancel_source
        return None if source is None else source.cancel_cause()

    @cancelled_by.setter
    def cancelled_by(self, cause: str | None) -> None:
        self._cancelled_by = cause

    @property
    def route(self) -> str | None:
        """The pattern of the route that matched, with its nest prefixes (``/users/{id}``):
        what access logs and metrics name a request by, since it takes few values. ``None``
        when no route did (404, 405, a redirect, ``OPTIONS``, a fallback)."""
        return self._route

    @property
    def peer(self) -> tuple[str, int] | None:
        """The address the connection came from. The same as ``client``, unless a trusted
        proxy (``ServerConfig.trusted_proxies``: forwarding headers or a PROXY protocol
        header) named the client: then ``client`` is that client and ``peer`` the proxy."""
        return self.client if self._peer is None else self._peer

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

    @property
    def host(self) -> str:
        """The host the request is for, ``host[:port]`` as the client wrote it: the ``Host``
        header, which the server sets from an HTTP/1.1 absolute-form target's authority (RFC
        9112 section 3.2.2), from HTTP/2's ``:authority``, and from what a trusted proxy
        forwarded (``ServerConfig.trusted_proxies``). ``""`` when the request names none
        (HTTP/1.0 without ``Host``)."""
        return self.headers.get("host") or ""

    def path_for(self, name: str, /, **params: Any) -> str:
        """The path of the app's route named ``name`` with ``params`` as its path parameters
        (``App.path_for``): ``request.path_for("get_user", user_id=42) == "/users/42"``.
        ``ValueError`` naming what is wrong; ``RuntimeError`` for a request no app serves."""
        if self._paths is None:
            raise RuntimeError("this request is not served by an app: it has no route names")
        return self._paths.path_for(name, **params)

    def url_for(self, name: str, /, **params: Any) -> str:
        """:meth:`path_for` as an absolute URL, with the scheme and host this request was
        sent to (``scheme``, ``host``: behind a trusted proxy, the ones it forwarded):
        ``https://shop.example/users/42``. ``ValueError`` also when the request names no
        host (HTTP/1.0 without ``Host``): use ``path_for`` there."""
        path = self.path_for(name, **params)
        host = self.host
        if not host:
            raise ValueError(f"url_for({name!r}): the request names no host; use path_for")
        return f"{self.scheme}://{host}{path}"

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

    def state(self, kind: type[T]) -> T:
        """The state value of type ``kind`` (or a subclass) visible to the matched route: the
        value ``State[kind]`` gives a handler of that route, found the same way (the outermost
        router's first). Usable from middleware and from ``FromRequest.from_request``. For a
        request no route answers (404, 405, a redirect, ``OPTIONS``), the routers whose prefix
        covers the path, the root router at least.

        Raises ``LookupError`` when no such value is registered; escaping a handler or a
        middleware, that is a 500 like any other bug."""
        found = find_state(self._route_states, kind)
        if found is None:
            name = getattr(kind, "__qualname__", repr(kind))
            raise LookupError(f"no state of type {name} is registered for {self.uri.raw_path}")
        return found

    @functools.cached_property
    def _dependency_values(self) -> dict[type, Any]:
        """What each ``FromRequest`` class resolved to for this request (its value, or the
        ``Error`` it raised), so that it runs at most once per request. Made on first use."""
        return {}

    def take_arrived_body(self) -> bool:
        """Whether the whole body is in ``body``: read before, or all arrived and taken now
        (``read_body`` in one step). Never waits; raises ``PayloadTooLarge`` like a read."""
        if self.body_consumed:
            return True
        whole = self.body_reader.take_whole()
        if whole is None:
            return False
        self.body = whole
        self.body_consumed = True
        return True

    async def read_body(self, on_chunk: Callable[[bytes], object] | None = None) -> bytes:
        """Read the whole body (once; later calls return the same bytes). ``on_chunk``, when
        given, sees each chunk as it arrives (the whole body at once if it was read before):
        a parser can do its work a chunk at a time, between reads; what it raises stops the
        read.

        Cancellation: a checkpoint while the body is still arriving. If cancelled, the body
        is left partly read and the connection will not be reused."""
        if self.body_consumed or self.take_arrived_body():
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
