"""The ``Method`` value: a ``str`` subclass with constants for the common methods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

__all__ = ["KNOWN_METHODS", "Method"]


class Method(str):
    """An HTTP method. Compares equal to its name: ``Method.GET == "GET"``."""

    __slots__ = ()

    GET: ClassVar[Method]
    HEAD: ClassVar[Method]
    POST: ClassVar[Method]
    PUT: ClassVar[Method]
    DELETE: ClassVar[Method]
    PATCH: ClassVar[Method]
    OPTIONS: ClassVar[Method]
    CONNECT: ClassVar[Method]
    TRACE: ClassVar[Method]

    def __repr__(self) -> str:
        return f"Method.{self!s}" if str(self) in _KNOWN else f"Method({str(self)!r})"

    def __str__(self) -> str:
        return str.__str__(self)

    @classmethod
    def of(cls, name: str | bytes) -> Method:
        """The interned ``Method`` for ``name`` (case-sensitive: ``"get"`` is another method)."""
        known = _KNOWN.get(name)
        if known is not None:
            return known
        if isinstance(name, bytes):
            name = name.decode("ascii")
            known = _KNOWN.get(name)
        return known if known is not None else cls(name)


_KNOWN: dict[str | bytes, Method] = {}
#: The interned common methods by name, ``str`` and ``bytes``: ``KNOWN_METHODS.get(name)``
#: is ``Method.of(name)`` for them, a call less (the server looks each request's up).
KNOWN_METHODS: Mapping[str | bytes, Method] = _KNOWN
for _name in ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"):
    _KNOWN[_name] = _KNOWN[_name.encode()] = Method(_name)
    setattr(Method, _name, _KNOWN[_name])
