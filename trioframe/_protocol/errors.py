"""``ProtocolError``: the peer broke the protocol. Carries the status to answer with."""

from __future__ import annotations

__all__ = ["ProtocolError"]


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
