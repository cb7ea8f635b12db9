"""The exceptions users meet (``Error`` and its subclasses, ``ConfigurationError``), the
standard error body, and the map of every exception in trioframe.

What each exception means to a user, and where it lives when not here::

    Error                         an HTTP answer: raise it from a handler, an extractor or a
    |                             middleware; it becomes a 4xx/5xx response with the
    |                             standard JSON body and its ``headers``
    +-- BadRequest 400, Unauthorized 401, Forbidden 403, NotFound 404, MethodNotAllowed 405,
    |   NotAcceptable 406, Conflict 409, PayloadTooLarge 413, UnsupportedMediaType 415, ValidationError 422
    |   (``errors`` lists what failed), TooManyRequests 429 (``Retry-After``)
    +-- InternalServerError 500   the message goes to the log, the client sees the reason

    ConfigurationError            a developer's mistake (a bad route, an unknown annotation,
                                  a bad setting), raised at registration or startup, never
                                  while serving a request

    WebSocketClosed               (``_websocket.connection``) a send on a WebSocket that has
                                  ended; a handler may let it propagate

    Internal signals: the layer that raises each one is answered by the layer above, and a
    user sees only the outcome (a status, a closed connection, a log line):

    ProtocolError                 (``_protocol.errors``) the peer broke HTTP; ``status`` is
    +-- MalformedHead             the answer, then the connection closes; an HTTP/2 head
                                  (``_protocol.http2_head``) fails its stream only
    UnsendableResponse            (``_protocol.errors``) the application built a response
                                  the protocol cannot carry: logged, answered 500 (or the
                                  exchange ends if its head is already out)
    ExchangeGone                  (``_server.exchange``) the peer went away under a write;
                                  nothing more is sent for the exchange
    ConnectionFailed              (``_protocol.http2``) an HTTP/2 connection ends with GOAWAY;
    Flood, FrameTooLarge          (``_protocol.http2_frames``) are two of its reasons
    MessageTooLarge               (``_websocket.assembly``) a WebSocket message over the
                                  limit: the connection closes with 1009
    FileChanged (an OSError)      (``_files.body``) a file got shorter while being sent: the
                                  response is cut short
    ParameterError (a ValueError) (``_http.params``) a header value's parameters cannot be
                                  read; the multipart reader answers it with 400
    ProxyProtocolError (ValueError)  (``_proxy.proxy_protocol``) a bad PROXY header: logged,
                                  the connection is closed
    ExtractionValueError, NestedErrors (ValueError)  (``_extract.values``) a value does not
                                  fit its type: collected into a 422 ``ValidationError``
    UnsupportedType               (``_extract.check``) an annotation the converters cannot
                                  produce: reported as a ``ConfigurationError``
    StartupFailure                (``_cli.errors``) the command cannot start: printed, with
                                  its exit status

``trioframe.testing`` adds the test client's own: ``WebSocketDisconnected`` (the socket is
closed) and ``WebSocketRejected`` (the upgrade was answered without a ``101``).

Nothing here does I/O.
"""

from __future__ import annotations

import http
import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

__all__ = [
    "BadRequest",
    "ConfigurationError",
    "Conflict",
    "Error",
    "Forbidden",
    "InternalServerError",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "PayloadTooLarge",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "ValidationError",
    "error_body",
    "reason_phrase",
]


class ConfigurationError(Exception):
    """The application is set up wrongly (a bad route pattern, a duplicate route, an
    unknown handler annotation). Raised at registration or when the app is frozen, never
    while serving a request."""


def reason_phrase(status: int) -> str:
    """The standard reason phrase for ``status`` (``"Unknown"`` for unregistered codes).

    User text never becomes a reason phrase: this table is the only source."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def error_body(
    status: int,
    message: str,
    errors: Iterable[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """Render the standard error body: ``{"status", "error", "message"[, "errors"]}``."""
    doc: dict[str, Any] = {"status": status, "error": reason_phrase(status), "message": message}
    if errors is not None:
        doc["errors"] = list(errors)
    if extra:
        for key, value in extra.items():
            doc.setdefault(key, value)
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


class Error(Exception):
    """An HTTP error answer: raise it from a handler, an extractor or a middleware.

    ``Error(status, message, headers=None, errors=None)`` works for any 4xx/5xx status; the
    class methods below build the common ones, each returning the matching subclass.
    The response carries the standard error body and the given ``headers``.
    """

    default_status: ClassVar[int] = 500
    default_message: ClassVar[str] = ""

    status: int
    message: str
    headers: dict[str, str]
    errors: list[str] | None

    def __init__(
        self,
        status: int | None = None,
        message: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        errors: Iterable[str] | None = None,
    ) -> None:
        status = self.default_status if status is None else int(status)
        if not 400 <= status <= 599:
            raise ValueError(f"Error status must be 4xx or 5xx, not {status}")
        self.status = status
        self.message = self.default_message if message is None else message
        if not self.message:
            self.message = reason_phrase(status)
        self.headers = dict(headers or {})
        self.errors = None if errors is None else list(errors)
        super().__init__(self.status, self.message)

    def __str__(self) -> str:
        return f"{self.status} {reason_phrase(self.status)}: {self.message}"

    @property
    def public_message(self) -> str:
        """The message sent to the client (5xx internal details are withheld)."""
        return self.message

    def body(self) -> bytes:
        """The standard error body for this error."""
        return error_body(self.status, self.public_message, self.errors)

    # -- constructors -------------------------------------------------------------------
    @staticmethod
    def bad_request(message: str = "", *, headers: Mapping[str, str] | None = None) -> BadRequest:
        """400 Bad Request."""
        return BadRequest(message=message or None, headers=headers)

    @staticmethod
    def unauthorized(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> Unauthorized:
        """401 Unauthorized; pass ``headers={"WWW-Authenticate": ...}`` to challenge."""
        return Unauthorized(message=message or None, headers=headers)

    @staticmethod
    def forbidden(message: str = "", *, headers: Mapping[str, str] | None = None) -> Forbidden:
        """403 Forbidden."""
        return Forbidden(message=message or None, headers=headers)

    @staticmethod
    def not_found(resource: str = "", *, headers: Mapping[str, str] | None = None) -> NotFound:
        """404 Not Found with message ``"<resource> not found"``."""
        return NotFound(message=f"{resource} not found" if resource else None, headers=headers)

    @staticmethod
    def method_not_allowed(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> MethodNotAllowed:
        """405 Method Not Allowed."""
        return MethodNotAllowed(message=message or None, headers=headers)

    @staticmethod
    def not_acceptable(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> NotAcceptable:
        """406 Not Acceptable: none of the media types the handler can write is acceptable to
        the client (``Accept.best`` returned ``None``)."""
        return NotAcceptable(message=message or None, headers=headers)

    @staticmethod
    def conflict(message: str = "", *, headers: Mapping[str, str] | None = None) -> Conflict:
        """409 Conflict."""
        return Conflict(message=message or None, headers=headers)

    @staticmethod
    def payload_too_large(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> PayloadTooLarge:
        """413 Content Too Large."""
        return PayloadTooLarge(message=message or None, headers=headers)

    @staticmethod
    def unsupported_media_type(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> UnsupportedMediaType:
        """415 Unsupported Media Type."""
        return UnsupportedMediaType(message=message or None, headers=headers)

    @staticmethod
    def validation(
        messages: Iterable[str], *, headers: Mapping[str, str] | None = None
    ) -> ValidationError:
        """422 with ``errors`` = the messages."""
        return ValidationError(messages, headers=headers)

    @staticmethod
    def too_many_requests(
        message: str = "",
        retry_after: float | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> TooManyRequests:
        """429 Too Many Requests, with ``Retry-After`` when ``retry_after`` is given."""
        return TooManyRequests(message or None, retry_after=retry_after, headers=headers)

    @staticmethod
    def internal(
        message: str = "", *, headers: Mapping[str, str] | None = None
    ) -> InternalServerError:
        """500; the message is logged by the server, never sent to the client."""
        return InternalServerError(message=message or None, headers=headers)


class _FixedStatusError(Error):
    def __init__(
        self,
        message: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        errors: Iterable[str] | None = None,
    ) -> None:
        super().__init__(None, message, headers=headers, errors=errors)


class BadRequest(_FixedStatusError):
    """400 Bad Request."""

    default_status = 400


class Unauthorized(_FixedStatusError):
    """401 Unauthorized."""

    default_status = 401


class Forbidden(_FixedStatusError):
    """403 Forbidden."""

    default_status = 403


class NotFound(_FixedStatusError):
    """404 Not Found."""

    default_status = 404


class MethodNotAllowed(_FixedStatusError):
    """405 Method Not Allowed."""

    default_status = 405


class NotAcceptable(_FixedStatusError):
    """406 Not Acceptable."""

    default_status = 406


class Conflict(_FixedStatusError):
    """409 Conflict."""

    default_status = 409


class PayloadTooLarge(_FixedStatusError):
    """413 Content Too Large."""

    default_status = 413


class UnsupportedMediaType(_FixedStatusError):
    """415 Unsupported Media Type."""

    default_status = 415


class StoreUnavailable(_FixedStatusError):
    """503 Service Unavailable: a shared store (``RedisStore``) could not be reached in time
    for this call. Raised into the handler for the failing call only; unhandled, it is a 503
    with the standard error body."""

    default_status = 503


class ValidationError(_FixedStatusError):
    """422 Unprocessable Content; ``errors`` lists what failed."""

    default_status = 422

    def __init__(
        self,
        messages: Iterable[str] = (),
        message: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message or "validation failed", headers=headers, errors=messages)


class TooManyRequests(_FixedStatusError):
    """429 Too Many Requests."""

    default_status = 429

    def __init__(
        self,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        merged = dict(headers or {})
        if retry_after is not None:
            merged.setdefault("Retry-After", str(max(0, int(-(-retry_after // 1)))))
        super().__init__(message, headers=merged)


class InternalServerError(_FixedStatusError):
    """500 Internal Server Error; the message stays in the log."""

    default_status = 500

    @property
    def public_message(self) -> str:
        return reason_phrase(self.status)
