"""Single values: ``Query[T]`` reading one query key, ``HeaderValue[T]`` and ``CookieValue[T]``.

A ``Query[T]`` whose ``T`` is a record or a mapping reads the whole query string
(``sources.query_step``); any other ``T`` names one key, as ``HeaderValue[T]`` and
``CookieValue[T]`` always do: the parameter's name (a header's with ``_`` as ``-``) or its
``Alias``. A scalar takes the key's value (a query key's last, a header's first), a flat
collection (``list[X]``, ...) every value. Absent, the parameter's default applies, ``None``
for ``X | None`` (a list, set or dict default copied, so that no request sees another's
changes); otherwise a 400 names the key (``query.page: required``). Everything is
decided at startup: per request, a step does one look-up and one conversion.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

from .._codec.check import UnsupportedType, check_value, type_name, unwrap
from .._codec.convert import TEXT_CONVERTER, describe_failure
from .._codec.shapes import is_fixed_tuple, is_mapping, is_sequence
from .._errors import BadRequest, Error
from .._http.grammar import TOKEN
from .._markers import Alias, Marker
from .._request import Request
from .context import Step, StepContext
from .params import MISSING, ParamInfo, describe
from .records import WHOLE_QUERY_KINDS, fields_of

__all__ = ["is_single", "reads_whole_query", "refuse_alias", "single_info", "single_step"]

#: How each source is written in annotations, and the message of its 400.
_SPELLING = {"query": "Query", "header": "HeaderValue", "cookie": "CookieValue"}
_MESSAGE = {
    "query": "invalid query parameters",
    "header": "invalid headers",
    "cookie": "invalid cookies",
}


def reads_whole_query(kind: Any) -> bool:
    """Whether ``Query[kind]`` is the whole query string: a record or a mapping."""
    kind = unwrap(kind)
    return fields_of(kind) is not None or is_mapping(kind)


def is_single(marker: Marker, annotation: Any) -> bool:
    """Whether ``annotation`` (carrying ``marker``) reads one key of the request."""
    if marker.source in ("header", "cookie"):
        return True
    return marker.source == "query" and not reads_whole_query(typing.get_args(annotation)[0])


def _alias_of(annotation: Any) -> str | None:
    """The name an ``Alias`` in ``annotation``'s own metadata gives, ``None`` without one."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Alias):
            return meta.name
    return None


def refuse_alias(ctx: StepContext, annotation: Any, written: str) -> None:
    """Raise ``ConfigurationError`` when the extractor ``written`` (no single value) has an
    ``Alias``: it reads no key the alias could rename."""
    if _alias_of(annotation) is not None:
        raise ctx.fail(
            f"{written}: Alias names one query key, header or cookie (a Query[T] of a value, "
            "HeaderValue[T], CookieValue[T])"
        )


def _nested_alias(kind: Any) -> bool:
    """Whether an ``Alias`` sits inside ``kind`` (``Query[Annotated[int, Alias("x")] | None]``),
    where it would name nothing."""
    return any(_alias_of(arg) is not None or _nested_alias(arg) for arg in typing.get_args(kind))


def _wire_name(source: str, parameter: str, annotation: Any) -> str:
    alias = _alias_of(annotation)
    if source == "header":
        return (alias or parameter.replace("_", "-")).lower()
    return alias or parameter


def _optional(kind: Any) -> bool:
    kind = unwrap(kind)
    return typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in (
        typing.get_args(kind)
    )


def _repeated(kind: Any) -> bool:
    """``list[X]``, ``set[X]``, ... (``| None`` or not): every value of the key."""
    kind = unwrap(kind)
    if _optional(kind):
        rest = [m for m in typing.get_args(kind) if m is not type(None)]
        kind = unwrap(rest[0]) if len(rest) == 1 else kind
    return is_sequence(kind) and not is_fixed_tuple(kind)


def single_info(ctx: StepContext, annotation: Any, marker: Marker) -> ParamInfo:
    """The ``ParamInfo`` of a single value: its wire name; required unless it has a default
    or is ``X | None``."""
    kind = typing.get_args(annotation)[0]
    return describe(
        ctx.parameter,
        annotation,
        marker.source,
        ctx.default,
        ctx.dependency,
        wire=_wire_name(marker.source, ctx.parameter, annotation),
        required=ctx.default is MISSING and not _optional(kind),
    )


def single_step(ctx: StepContext, annotation: Any, marker: Marker) -> Step:
    """The step reading one query key, header or cookie into ``T`` (checked here, at
    startup). Raises ``ConfigurationError`` for a ``T`` text cannot hold, a list of cookies,
    an ``Alias`` inside ``T``, or a header name that is not a token."""
    source = marker.source
    value, *metadata = typing.get_args(annotation)
    written = f"{_SPELLING[source]}[{type_name(value)}]"
    if _nested_alias(value):
        raise ctx.fail(
            f"{written}: an Alias inside the type names nothing; write "
            f"Annotated[{_SPELLING[source]}[...], Alias(...)]"
        )
    try:
        check_value(value, source)
    except UnsupportedType as exc:
        whole = ""
        if source == "query" and isinstance(unwrap(value), type):
            whole = f" (a whole query string is read into {WHOLE_QUERY_KINDS})"
        raise ctx.fail(f"{written}: {exc}{whole}") from None
    repeated = _repeated(value)
    if source == "cookie" and repeated:
        raise ctx.fail(f"{written}: a request carries one value per cookie name")
    name = _wire_name(source, ctx.parameter, annotation)
    if source == "header" and not TOKEN.fullmatch(name):
        raise ctx.fail(f"{written}: {name!r} is not a header name")
    # What is converted: T with any metadata that is not ours (constraints, say).
    others = tuple(m for m in metadata if not isinstance(m, Marker | Alias))
    kind = typing.Annotated[(value, *others)] if others else value
    hook = TEXT_CONVERTER.get_structure_hook(kind)
    fallback = ctx.default
    if fallback is MISSING and _optional(value):
        fallback = None
    fresh = type(fallback) in (list, set, dict)  # mutable: each request gets its own copy
    where = f"{source}.{name}"

    def invalid(exc: Exception) -> Error:
        return BadRequest(_MESSAGE[source], errors=describe_failure(exc, where))

    def required() -> Error:
        return BadRequest(_MESSAGE[source], errors=[f"{where}: required"])

    if source == "query" and not repeated:  # the common case, without a reader call

        async def query_value(request: Request) -> Any:
            text = request.query_params.get(name)
            if text is None:
                if fallback is MISSING:
                    raise required()
                return fallback.copy() if fresh else fallback
            try:
                return hook(text, kind)
            except Exception as exc:
                raise invalid(exc) from None

        return query_value
    read = _reader(source, name, repeated)

    async def single_value(request: Request) -> Any:
        found = read(request)
        if found is None:
            if fallback is MISSING:
                raise required()
            return fallback.copy() if fresh else fallback
        try:
            return hook(found, kind)
        except Exception as exc:
            raise invalid(exc) from None

    return single_value


def _reader(source: str, name: str, repeated: bool) -> Callable[[Request], Any]:
    """What gives the raw text (a list of texts when ``repeated``) of a query key, header or
    cookie, ``None`` when absent."""
    if source == "query":

        def query_values(request: Request) -> list[str] | None:
            return request.query_list(name) or None

        return query_values
    if source == "cookie":
        return lambda request: request.cookies().get(name)
    key = name.encode("latin-1")  # a token: ASCII; the raw names are lower-case
    if repeated:

        def header_values(request: Request) -> list[str] | None:
            found = [v.decode("latin-1") for k, v in request.headers.raw if k == key]
            return found or None

        return header_values

    def header_value(request: Request) -> str | None:
        for k, v in request.headers.raw:
            if k == key:
                return v.decode("latin-1")
        return None

    return header_value
