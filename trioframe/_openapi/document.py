"""The OpenAPI 3.1 document of a frozen application, built from its ``routes``.

Everything comes from what the app itself does (``App.routes``: the route's name, keywords,
the planner's ``ParamInfo`` of every input, the declared return type), with the schemas of
``SchemaRegistry``, which are written over the same converters that read and write the
values:

- one operation per route (WebSocket routes and ``include_in_schema=False`` left out),
  ``operationId`` = the route's name, with the method (and the path) appended when several
  operations share it;
  ``summary``/``description`` from the keywords, else the handler's docstring (first line,
  the rest);
- parameters: ``Path`` (a record: one per field), ``Query`` (a record: one per field; a
  single value: itself), ``HeaderValue``, ``CookieValue``, the inputs of ``FromRequest``
  dependencies included; request bodies from ``Json``, ``Form``, ``Multipart`` and ``Body``;
- responses: the declared return (or ``responses=``) under the route's status, and every
  status the framework answers for this route's inputs (400, 401, 422, 413, 415, and 500
  always) with the standard error body;
- security: the scheme of every credential extractor the route takes, directly or through a
  ``FromRequest`` dependency, under ``components/securitySchemes``; an operation without one
  lists none (no lock on a public route).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from .._codec.shapes import is_record
from .._errors import ConfigurationError
from .._extract.params import ParamInfo
from .._response import Response
from .records import fields_of
from .schema import COMPONENTS, SchemaRegistry


class RouteInfo(Protocol):
    """What the document reads of a route (``trioframe.RouteInfo``; named here without
    importing it, so that the router may serve the document)."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def methods(self) -> tuple[str, ...]: ...
    @property
    def handler(self) -> Callable[..., Any]: ...
    @property
    def params(self) -> tuple[ParamInfo, ...]: ...
    @property
    def returns(self) -> Any: ...
    @property
    def websocket(self) -> bool: ...
    @property
    def status(self) -> int | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def summary(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def deprecated(self) -> bool: ...
    @property
    def include_in_schema(self) -> bool: ...
    @property
    def responses(self) -> Mapping[int, Any] | None: ...


__all__ = ["ERROR_SCHEMA", "build_document"]

#: The standard error body every error answer carries.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "error", "message"],
    "properties": {
        "status": {"type": "integer"},
        "error": {"type": "string"},
        "message": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "string"}},
    },
}
_ERROR_NAME = "Error"
_REASONS = {
    400: "Bad request: a parameter or the body could not be read",
    401: "Unauthorized: a credential is missing or malformed",
    413: "Payload too large: the body is over its limit",
    415: "Unsupported media type: the body's Content-Type is not one the route reads",
    422: "Validation error: the body's fields do not fit",
    500: "Internal server error",
}
_PARAMETER_PLACES = {"path": "path", "query": "query", "header": "header", "cookie": "cookie"}
_OPAQUE_RETURNS = (Response,)
_UNIONS = (typing.Union, types.UnionType)


def build_document(
    routes: Iterable[RouteInfo],
    *,
    title: str,
    version: str,
    description: str | None = None,
    servers: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a frozen app's ``routes`` as a dictionary;
    ``ConfigurationError`` for a type no schema can describe."""
    registry = SchemaRegistry()
    schemes: dict[str, dict[str, str]] = {}
    paths: dict[str, dict[str, Any]] = {}
    documented = [r for r in routes if not r.websocket and r.include_in_schema]
    for route, method, operation_id in _operation_ids(documented):
        where = f"{method} {route.path}"
        try:
            operation = _operation(route, operation_id, registry, schemes)
        except ConfigurationError:
            raise
        except Exception as exc:
            raise ConfigurationError(f"OpenAPI: {where}: {exc}") from None
        paths.setdefault(route.path.replace("{*", "{"), {})[method.lower()] = operation
    info: dict[str, Any] = {"title": title, "version": version}
    if description is not None:
        info["description"] = description
    document: dict[str, Any] = {"openapi": "3.1.0", "info": info}
    if servers:
        document["servers"] = [{"url": url} for url in servers]
    document["paths"] = paths
    components = registry.components()
    components[_ERROR_NAME] = ERROR_SCHEMA
    document["components"] = {"schemas": dict(sorted(components.items()))}
    if schemes:
        document["components"]["securitySchemes"] = dict(sorted(schemes.items()))
    return document


def _operation_ids(routes: list[RouteInfo]) -> list[tuple[RouteInfo, str, str]]:
    """Each route's operations with their ``operationId``: the route's name, or, for a name
    several operations share (one handler under GET and POST, or on several paths), the name
    and the method (``resource_get``), then the path too when that is still shared."""
    operations = [(route, method) for route in routes for method in route.methods]
    counts: dict[str, int] = {}
    for route, _ in operations:
        counts[route.name] = counts.get(route.name, 0) + 1
    named = [
        (route, method, route.name if counts[route.name] == 1 else f"{route.name}_{method.lower()}")
        for route, method in operations
    ]
    taken: dict[str, int] = {}
    for _, _, operation_id in named:
        taken[operation_id] = taken.get(operation_id, 0) + 1
    return [
        (
            route,
            method,
            operation_id if taken[operation_id] == 1 else _with_path(operation_id, route),
        )
        for route, method, operation_id in named
    ]


def _with_path(operation_id: str, route: RouteInfo) -> str:
    slug = "".join(c if c.isalnum() else "_" for c in route.path).strip("_")
    return f"{operation_id}_{slug}"


def _operation(
    route: RouteInfo,
    operation_id: str,
    registry: SchemaRegistry,
    schemes: dict[str, dict[str, str]],
) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": operation_id}
    summary, description = _texts(route)
    if summary:
        operation["summary"] = summary
    if description:
        operation["description"] = description
    if route.tags:
        operation["tags"] = list(route.tags)
    if route.deprecated:
        operation["deprecated"] = True
    parameters: list[dict[str, Any]] = []
    bodies: dict[str, Any] = {}
    statuses = {500}
    required: dict[str, list[str]] = {}
    optional = False
    for param in route.params:
        place = _PARAMETER_PLACES.get(param.source)
        if param.security is not None:
            scheme = param.security
            schemes[scheme.scheme_name] = scheme.as_openapi()
            required[scheme.scheme_name] = []
            optional = optional or not param.required
            statuses.add(401)
        elif place is not None:
            parameters.extend(_parameters(param, place, registry))
            statuses.add(400)
        elif param.source == "body" and param.media_type is not None:
            bodies.update(_body(param, registry))
            statuses.update({400, 413, 415} if param.media_type != _OCTETS else {413})
            if param.media_type in (_JSON, _FORM):
                statuses.add(422)
    if required:
        # every credential the route takes is needed at once; an optional one also lets the
        # operation go without (the empty requirement)
        operation["security"] = [required, {}] if optional else [required]
    if parameters:
        operation["parameters"] = _unique(parameters)
    if bodies:
        operation["requestBody"] = {"required": True, "content": bodies}
    operation["responses"] = _responses(route, statuses, registry)
    return operation


_JSON, _FORM, _OCTETS = (
    "application/json",
    "application/x-www-form-urlencoded",
    "application/octet-stream",
)
_MULTIPART = "multipart/form-data"


def _texts(route: RouteInfo) -> tuple[str | None, str | None]:
    doc = inspect.getdoc(route.handler) or ""
    first, _, rest = doc.partition("\n")
    summary = route.summary or (first.strip() or None)
    description = route.description or (rest.strip() or None)
    return summary, description


def _parameters(param: ParamInfo, place: str, registry: SchemaRegistry) -> list[dict[str, Any]]:
    if is_record(param.type) and place in ("path", "query"):
        return [
            _parameter(field.name, place, field.kind, field.required, registry, field.default)
            for field in fields_of(param.type)
        ]
    required = param.required or place == "path"
    default = None if param.required else param.default
    return [_parameter(param.name, place, param.type, required, registry, default)]


def _parameter(
    name: str,
    place: str,
    kind: Any,
    required: bool,
    registry: SchemaRegistry,
    default: Any = None,
) -> dict[str, Any]:
    schema = dict(registry.schema_for(kind, direction="input"))
    parameter: dict[str, Any] = {"name": name, "in": place, "schema": schema}
    if required or place == "path":
        parameter["required"] = True
    if place == "query" and schema.get("type") == "array":
        parameter["style"], parameter["explode"] = "form", True
    return parameter


def _unique(parameters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One parameter per (name, place): a dependency and its handler may read the same one."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for parameter in parameters:
        key = (parameter["name"], parameter["in"])
        if key not in seen:
            seen.add(key)
            kept.append(parameter)
    return kept


def _body(param: ParamInfo, registry: SchemaRegistry) -> dict[str, Any]:
    media = param.media_type
    if media == _OCTETS:
        return {_OCTETS: {"schema": {"type": "string", "format": "binary"}}}
    if media == _MULTIPART:
        return {_MULTIPART: {"schema": {"type": "object"}}}
    schema = registry.schema_for(param.type, direction="input")
    if media == _FORM:
        return {_FORM: {"schema": schema}, _MULTIPART: {"schema": schema}}
    return {str(media): {"schema": schema}}


def _responses(route: RouteInfo, statuses: set[int], registry: SchemaRegistry) -> dict[str, Any]:
    status = route.status or 200
    responses: dict[str, Any] = {str(status): _success(route, status, registry)}
    for code, documented in (route.responses or {}).items():
        if isinstance(documented, str):
            responses[str(code)] = {"description": documented}
        else:
            responses[str(code)] = {
                "description": _reason(code),
                "content": {_JSON: {"schema": registry.schema_for(documented, direction="output")}},
            }
    for code in sorted(statuses):
        responses.setdefault(
            str(code),
            {
                "description": _REASONS[code],
                "content": {_JSON: {"schema": {"$ref": COMPONENTS + _ERROR_NAME}}},
            },
        )
    return dict(sorted(responses.items()))


def _success(route: RouteInfo, status: int, registry: SchemaRegistry) -> dict[str, Any]:
    returns = route.returns
    answer: dict[str, Any] = {"description": _reason(status)}
    if status == 204 or returns is None or returns is type(None):
        return answer
    if returns is str:
        answer["content"] = {"text/plain": {"schema": {"type": "string"}}}
    elif returns is bytes:
        answer["content"] = {_OCTETS: {"schema": {"type": "string", "format": "binary"}}}
    elif returns is object or returns is Any or _opaque(returns):
        return answer
    else:
        schema = registry.schema_for(returns, direction="output")
        answer["content"] = {_JSON: {"schema": schema}}
    return answer


def _opaque(returns: Any) -> bool:
    """A ``Response`` (any body), or a union that includes one."""
    members = typing.get_args(returns) if typing.get_origin(returns) in _UNIONS else (returns,)
    return any(isinstance(m, type) and issubclass(m, _OPAQUE_RETURNS) for m in members)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Response"
