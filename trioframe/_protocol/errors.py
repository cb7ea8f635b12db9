"""The protocol layer's two errors: ``ProtocolError`` (the peer broke the protocol; carries the
status to answer with) and ``UnsendableResponse`` (our side built a response the protocol
cannot carry)."""

from __future__ import annotations

__all__ = ["ProtocolError", "UnsendableResponse"]


class ProtocolError(Exception):
    """The peer sent something HTTP forbids. ``status`` is the answer (400, 408, 413, 414,
    431, 505, ...); ``message`` is our own text (never the peer's bytes). The connection is
    always closed after the answer.

    ``answer=False`` means the peer does not speak HTTP at all (a TLS handshake on a plain
    port): any answer would be garbage to it, so the connection is closed without one and
    ``status`` is only a label for logs and tests."""

    def __init__(self, status: int, message: str, *, answer: bool = True) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message
        self.answer = answer

    def __str__(self) -> str:
        return f"{self.status}: {self.message}"


class UnsendableResponse(Exception):
    """The protocol layer refuses to write a response the application built (a status or a
    header it cannot carry, a body that does not match its Content-Length). Raised before any
    byte of it is written when the refusal comes from the head or a whole body."""
