"""Step factories: one per extractor kind, each run once per handler parameter when the app
is frozen, each returning the step that runs per request.

A step is ``async (request) -> value`` and raises ``Error`` with the statuses docs/extractors.md
lists ("Failure statuses and the error body"). Shape checks that can be done without a request (a ``Path[T]`` whose
fields are not the route's parameters) raise ``ConfigurationError`` here, at freeze time.
``State[T]`` has a module of its own (``state.py``): it may be decided after the lifespans
have entered.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import cattrs

from .._codec import generated, pydantic_models
from .._codec.check import type_name
from .._codec.check import unwrap as _unwrap
from .._codec.convert import JSON_CONVERTER, TEXT_CONVERTER, describe_failure
from .._codec.shapes import is_fixed_tuple, is_sequence
from .._errors import (
    BadRequest,
    Error,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationError,
)
from .._http.media import essence
from .._http.url import QueryDecoder
from .._markers import Body
from .._multipart.fields import read_form_fields
from .._request import Request
from .context import Step, StepContext
from .json_text import MAX_JSON_DEPTH, deeper_than_allowed, parse_json
from .records import WHOLE_QUERY_KINDS, fields_of

__all__ = ["MAX_JSON_DEPTH", "Step", "StepContext"]


def _resolved_fields(kind: type) -> dict[str, Any]:
    if pydantic_models.is_model(kind):
        return fields_of(kind) or {}
    hints = typing.get_type_hints(kind)
    return {name: hints.get(name, Any) for name in (fields_of(kind) or {})}


def _structure(converter: cattrs.Converter, value: Any, kind: Any, location: str) -> Any:
    try:
        return converter.structure(value, kind)
    except Exception as exc:
        raise _invalid(location, describe_failure(exc, location)) from None


def _invalid(location: str, errors: list[str]) -> Error:
    """Path and query values that do not fit are 400; a body that does not fit is 422."""
    if location in ("path", "query"):
        return BadRequest(f"invalid {location} parameters", errors=errors)
    return ValidationError(errors, message="request body does not fit")


# -- Path ----------------------------------------------------------------------------------
def path_step(ctx: StepContext, kind: Any) -> Step:
    names = ctx.route_params
    origin = typing.get_origin(kind)
    fields = fields_of(kind)
    if fields is not None:
        if set(fields) != set(names):
            raise ctx.fail(
                f"Path fields {sorted(fields)} do not match the route parameters {sorted(names)}"
            )

        async def by_fields(request: Request) -> Any:
            return _structure(TEXT_CONVERTER, request.params, kind, "path")

        return by_fields
    if origin is tuple:
        arity = len(typing.get_args(kind))
        if arity != len(names):
            raise ctx.fail(f"Path tuple has {arity} items, the route has {len(names)} parameters")

        async def by_position(request: Request) -> Any:
            values = [request.params[name] for name in names]
            return tuple(_structure(TEXT_CONVERTER, values, kind, "path"))

        return by_position
    if origin is list:

        async def all_values(request: Request) -> Any:
            values = [request.params[name] for name in names]
            return _structure(TEXT_CONVERTER, values, kind, "path")

        return all_values
    if len(names) == 1 or ctx.parameter in names:
        name = names[0] if len(names) == 1 else ctx.parameter

        async def one(request: Request) -> Any:
            try:
                return TEXT_CONVERTER.structure(request.params[name], kind)
            except Exception as exc:
                raise _invalid("path", describe_failure(exc, f"path.{name}")) from None

        return one
    raise ctx.fail(
        f"a scalar Path needs a route with one parameter (or one named {ctx.parameter!r}); "
        f"this route has {list(names)}"
    )


# -- Query and Form ------------------------------------------------------------------------
def _pairs_to_object(kind: Any, location: str) -> Callable[[list[tuple[str, str]]], Any]:
    """Build, once, the function turning decoded pairs into ``kind``."""
    if kind is dict or typing.get_origin(kind) is dict:
        if typing.get_args(kind)[1:] in ((), (str,), (Any,)):
            return lambda pairs: dict(pairs)
        return lambda pairs: _structure(TEXT_CONVERTER, dict(pairs), kind, location)
    if fields_of(kind) is None:
        whole = "query string" if location == "query" else "form"
        raise TypeError(
            f"{'Query' if location == 'query' else 'Form'}[{type_name(kind)}]: the {whole} is "
            f"read into {WHOLE_QUERY_KINDS}; {type_name(kind)} is none of these"
        )
    resolved = _resolved_fields(kind)
    lists = {n for n, t in resolved.items() if _is_repeated(t)}
    optional = {n for n, t in resolved.items() if _allows_none(t)}

    def build(pairs: list[tuple[str, str]]) -> Any:
        data: dict[str, Any] = {}
        for name, value in pairs:
            if name in lists:
                data.setdefault(name, []).append(value)
            elif name in resolved:
                data[name] = value
        for name in optional - data.keys():
            if not _has_default(kind, name):
                data[name] = None
        return _structure(TEXT_CONVERTER, data, kind, location)

    return build


def _is_repeated(kind: Any) -> bool:
    """A field that collects every value of a repeated key: ``list[X]``, ``set[X]``, ..."""
    kind = _unwrap(kind)
    return is_sequence(kind) and not is_fixed_tuple(kind)


def _allows_none(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in (
        typing.get_args(kind)
    )


def _has_default(kind: type, name: str) -> bool:
    if typing.is_typeddict(kind):
        return name in kind.__optional_keys__  # type: ignore[attr-defined]
    if pydantic_models.is_model(kind):
        return not kind.model_fields[name].is_required()  # type: ignore[attr-defined]
    if attrs.has(kind):
        return attrs.fields_dict(kind)[name].default is not attrs.NOTHING
    field = {f.name: f for f in dataclasses.fields(kind)}[name]
    return not (
        field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    )


def query_step(ctx: StepContext, kind: Any) -> Step:
    try:
        build = _pairs_to_object(kind, "query")
    except TypeError as exc:
        raise ctx.fail(str(exc)) from None

    async def from_query(request: Request) -> Any:
        return build(request.query_pairs)

    return from_query


def form_step(ctx: StepContext, kind: Any) -> Step:
    try:
        build = _pairs_to_object(kind, "body")
    except TypeError as exc:
        raise ctx.fail(str(exc)) from None
    # A file part named like one of T's fields is refused; other file parts are skipped.
    fields = fields_of(kind)
    refused = frozenset(fields or ())
    limits, reading = ctx.multipart, ctx.form_reading

    async def from_form(request: Request) -> Any:
        media = _media_type(request)
        if media == "multipart/form-data":
            return build(await read_form_fields(request, limits, refused, reading.streams))
        if not _is_form(media):
            raise UnsupportedMediaType(
                "expected Content-Type application/x-www-form-urlencoded or multipart/form-data"
            )
        decoder = QueryDecoder()
        try:  # decoded a chunk at a time as the body arrives
            await request.read_body(decoder.feed)
            pairs = decoder.finish()
        except ValueError as exc:  # UnicodeDecodeError included
            raise BadRequest(f"malformed form body: {exc}") from None
        return build(pairs)

    return from_form


# -- JSON ----------------------------------------------------------------------------------
def json_step(ctx: StepContext, kind: Any) -> Step:
    limit = ctx.max_json_size
    nullable = kind is Any or kind is None or _allows_none(_unwrap(kind))
    fast = generated.structurer(kind, JSON_CONVERTER)

    async def from_json(request: Request) -> Any:
        if not _is_json(_media_type(request)):
            raise UnsupportedMediaType("expected Content-Type application/json")
        body = await request.read_body(on_chunk=_size_check(request, limit))
        # The parser runs first: it refuses invalid JSON at once whatever its size, and
        # nesting deeper than the interpreter's recursion limit with a RecursionError.
        try:
            value = parse_json(body)
        except RecursionError:
            raise _too_deep() from None
        except ValueError as exc:  # UnicodeDecodeError included
            raise BadRequest(f"malformed JSON: {exc}") from None
        if isinstance(value, list | dict) and deeper_than_allowed(body):
            raise _too_deep()
        if kind is Any:
            return value
        if value is None and not nullable:
            raise ValidationError(["body: required"], message="a JSON body is required")
        if fast is not None:
            try:
                return fast(value)
            except Exception:  # the cattrs path gives the error, or the value, it always gave
                pass
        return _structure(JSON_CONVERTER, value, kind, "body")

    return from_json


def _size_check(request: Request, limit: int) -> Callable[[bytes], None] | None:
    """For ``read_body(on_chunk=...)``: 413 once a JSON body is over ``limit`` bytes (or at
    once, from a declared Content-Length). The stdlib parser holds the event loop for the
    whole parse: ``max_json_size`` bounds how long (see docs/security.md). ``None`` (nothing
    to count) when the declared length is within the limit: the protocol layers deliver no
    more than it (HTTP/1.1 by its framing, HTTP/2 by resetting a stream whose data runs
    over)."""
    declared = request.content_length
    if declared is not None:
        if declared > limit:
            raise _too_large(limit)
        return None
    size = 0

    def count(chunk: bytes) -> None:
        nonlocal size
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)

    return count


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"JSON body is larger than max_json_size ({limit} bytes)")


def _too_deep() -> BadRequest:
    return BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def _media_type(request: Request) -> str:
    return essence(request.headers.get("content-type") or "")


def _is_json(media: str) -> bool:
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _is_form(media: str) -> bool:
    return media == "application/x-www-form-urlencoded"


# -- Extension and the class-based kinds (State: ``state.py``) ---------------------------------
def extension_step(ctx: StepContext, kind: Any) -> Step:
    name = getattr(kind, "__name__", repr(kind))

    async def from_extensions(request: Request) -> Any:
        value = request.extensions.get(kind)
        if value is None:
            raise Error.internal(f"no {name} in request.extensions for {ctx.handler}")
        return value

    return from_extensions


async def body_step(request: Request) -> Body:
    return Body(await request.read_body())


def or_error(step: Step) -> Step:
    """``X | Error``: hand the failure to the handler instead of answering with it."""

    async def caught(request: Request) -> Any:
        try:
            return await step(request)
        except Error as error:
            return error

    return caught


def strip_error(args: Sequence[Any]) -> tuple[Any, ...]:
    """The union members that are not ``Error`` (or a subclass)."""
    return tuple(a for a in args if not (isinstance(a, type) and issubclass(a, Error)))
