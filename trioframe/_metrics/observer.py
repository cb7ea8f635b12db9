"""``Observer``: what the server tells an application's metrics, and nothing else.

The frozen app carries one (``App.observer``, ``None`` when the app has no metrics); the
server calls it only behind ``if observer is not None``, so an app without metrics pays one
test per request. Every argument is already a bounded label value or a number: the server
never passes a path, a header or anything else a client chooses freely (the method is
normalised by ``method_label``).
"""

from __future__ import annotations

from typing import Protocol

from .._http.semconv import OTHER_METHOD, method_label

__all__ = ["OTHER_METHOD", "Observer", "method_label"]


class Observer(Protocol):
    """Receives the server's figures. Label values the server passes:

    * ``protocol``: ``"http/1.1"`` or ``"h2"`` (the protocol a connection speaks);
    * eviction ``state``: ``"opening"`` (before its protocol runs: a PROXY header, the TLS
      handshake, the first bytes), ``"idle"`` (waiting for a request), ``"head"`` (a request
      head half sent) or ``"lingering"`` (answered, closing);
    * TLS failure ``reason``: ``"error"`` or ``"timeout"``;
    * HTTP/2 GOAWAY ``reason``: ``"flood"``, ``"frame_too_large"``, ``"protocol_error"`` or
      ``"slow_header_block"``;
    * ``route``: the pattern of the route that matched (``request.route``), ``None`` for none.
    """

    def request_started(self, method: bytes) -> None:
        """A request is being served (its handler is about to run)."""

    def request_ended(self, method: bytes) -> None:
        """The request that ``request_started`` announced is no longer served."""

    def request_answered(
        self,
        method: bytes,
        route: str | None,
        status: int | None,
        seconds: float,
        request_size: int | None,
        response_size: int | None,
    ) -> None:
        """A request was answered with ``status`` (``None``: it ended with no answer, the
        client gone or the exchange cut short) ``seconds`` after its head arrived; the body
        sizes in bytes (``None``: unknown)."""

    def connection_opened(self, protocol: str) -> None:
        """A connection started speaking ``protocol``."""

    def connection_closed(self, protocol: str) -> None:
        """A connection that ``connection_opened`` announced has closed."""

    def connection_evicted(self, state: str) -> None:
        """At the connection limit, a connection in ``state`` was closed for a waiting client."""

    def tls_handshake_failed(self, reason: str) -> None:
        """A TLS handshake failed (``"error"``) or timed out (``"timeout"``)."""

    def http2_error_goaway(self, reason: str) -> None:
        """An HTTP/2 connection was ended with an error GOAWAY, for ``reason``."""

    def websocket_opened(self, route: str | None) -> None:
        """A WebSocket session began on ``route``."""

    def websocket_closed(self, route: str | None) -> None:
        """A WebSocket session that ``websocket_opened`` announced has ended."""

    def refused_at_shutdown(self) -> None:
        """A request was answered 503 because graceful shutdown had begun."""
