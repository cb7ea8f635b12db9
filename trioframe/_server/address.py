"""Addresses: parsing the ``addr`` argument of ``Server`` (``"ip:port"``, ``"[v6]:port"`` or a
tuple) and writing a peer's address for logs."""

from __future__ import annotations

__all__ = ["format_peer", "parse_address"]


def parse_address(addr: str | tuple[str, int]) -> tuple[str, int]:
    """``(host, port)`` from ``"127.0.0.1:3000"``, ``"[::1]:3000"`` or ``("::1", 3000)``."""
    if isinstance(addr, tuple):
        host, port = addr
    else:
        if addr.startswith("["):
            host, sep, rest = addr[1:].partition("]")
            if not sep or not rest.startswith(":"):
                raise ValueError(f"bad address {addr!r}: expected '[v6]:port'")
            port_text = rest[1:]
        else:
            host, sep, port_text = addr.rpartition(":")
            if not sep or ":" in host:
                raise ValueError(f"bad address {addr!r}: expected 'ip:port' or '[v6]:port'")
        try:
            port = int(port_text)
        except ValueError:
            raise ValueError(f"bad port in address {addr!r}") from None
    if not 0 <= int(port) <= 65535:
        raise ValueError(f"port {port} out of range")
    return str(host), int(port)


def format_peer(client: tuple[str, int] | None) -> str:
    """``host:port`` (``[v6]:port``) for logs; ``an unknown peer`` without an address."""
    if client is None:
        return "an unknown peer"
    host, port = client
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
