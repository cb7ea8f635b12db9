"""Media types (RFC 9110 section 8.3.1): ``type/subtype`` and its parameters.

Two readings of a ``Content-Type`` value:

* :func:`essence` (:func:`essence_bytes` for raw fields): the lower-case ``type/subtype``
  before the first ``;``, OWS trimmed. It never raises: a malformed value gives a string no
  media type equals, so the caller's answer to an unexpected type (415, no compression, a
  plain stream) covers it.
* :meth:`MediaType.parse`: the strict reading, parameters included, by the rules of
  :func:`~trioframe._http.params.parse_header_parameters`; ``ParameterError`` for anything
  malformed or ambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .params import ParameterError, parse_header_parameters

__all__ = ["MediaType", "essence", "essence_bytes"]


def essence(value: str) -> str:
    """``"Application/JSON; charset=utf-8"`` → ``"application/json"``."""
    return value.partition(";")[0].strip(" \t").lower()


def essence_bytes(value: bytes) -> bytes:
    """:func:`essence` of a raw field value."""
    return value.partition(b";")[0].strip(b" \t").lower()


@attrs.frozen(unsafe_hash=False)
class MediaType:
    """A media type read strictly: ``essence`` is the lower-case ``type/subtype``; ``params``
    maps the lower-case parameter names to their values as given."""

    essence: str
    params: Mapping[str, str]

    @classmethod
    def parse(cls, value: str) -> MediaType:
        """Read a ``Content-Type`` value; ``ParameterError`` says what is wrong with it."""
        main, params = parse_header_parameters(value)
        if "/" not in main:
            raise ParameterError("a media type is type/subtype, not a bare token")
        return cls(main, params)

    @property
    def charset(self) -> str | None:
        """The ``charset`` parameter, as given (``None`` when absent)."""
        return self.params.get("charset")
