"""What a registration call says about its route beyond method, path and handler: its name,
and what documentation tools read (status, tags, summary, description, deprecation,
responses). Every keyword is checked when the route is registered."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypedDict

import attrs

from .._errors import ConfigurationError

__all__ = ["RouteMeta", "RouteOptions", "check_nest_name", "named", "route_meta"]

#: What ``responses=`` maps a status to: a description, or the type of the body (a class or a
#: parameterised type such as ``list[Item]``).
ResponseDoc = str | type


class RouteOptions(TypedDict, total=False):
    """The keywords every registration call takes (``get``, ``post``, ..., ``route``,
    ``websocket``), each optional:

    * ``name`` (``None``: the handler's ``__name__``): what ``path_for`` and ``url_for``
      call the route; a nest ``name`` prefixes it (``api.get_user``).
    * ``status`` (``None``): the status of a successful answer, 100 to 599.
    * ``tags`` (``()``): words that group routes in documentation.
    * ``summary``, ``description`` (``None``): a line and a text about the route.
    * ``deprecated`` (``False``), ``include_in_schema`` (``True``).
    * ``responses`` (``None``): other answers the route gives, by status: a description or
      the body's type (``{404: "no such user"}``).
    """

    name: str | None
    status: int | None
    tags: Iterable[str]
    summary: str | None
    description: str | None
    deprecated: bool
    include_in_schema: bool
    responses: Mapping[int, ResponseDoc] | None


@attrs.frozen
class RouteMeta:
    """A route's checked keywords (see :class:`RouteOptions`). ``name`` is the full name
    once the route is frozen (nest names before it); ``explicit``: it was given (``name=``),
    not taken from the handler."""

    name: str
    explicit: bool = False
    status: int | None = None
    tags: tuple[str, ...] = ()
    summary: str | None = None
    description: str | None = None
    deprecated: bool = False
    include_in_schema: bool = True
    responses: Mapping[int, ResponseDoc] | None = None

    def under(self, prefix: str) -> RouteMeta:
        """This route's meta inside a router nested with ``name=prefix``."""
        return attrs.evolve(self, name=f"{prefix}.{self.name}")


def _is_status(value: object) -> bool:
    return type(value) is int and 100 <= value <= 599


def _optional_text(what: str, keyword: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(f"{what}: {keyword} must be a str or None, not {value!r}")
    return value


def _flag(what: str, keyword: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigurationError(f"{what}: {keyword} must be True or False, not {value!r}")
    return value


def _tags(what: str, tags: object) -> tuple[str, ...]:
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ConfigurationError(
            f"{what}: tags must be a list of str, such as tags=['users'], not {tags!r}"
        )
    found = tuple(tags)
    for tag in found:
        if not isinstance(tag, str) or not tag:
            raise ConfigurationError(f"{what}: each tag must be a non-empty str, not {tag!r}")
    return found


def _responses(what: str, responses: object) -> Mapping[int, ResponseDoc] | None:
    if responses is None:
        return None
    if not isinstance(responses, Mapping):
        raise ConfigurationError(
            f"{what}: responses must map statuses to a description or a type, "
            f"such as responses={{404: 'no such user'}}, not {responses!r}"
        )
    for status, doc in responses.items():
        if not _is_status(status):
            raise ConfigurationError(
                f"{what}: responses key {status!r} is not a status; use an int from 100 to 599"
            )
        if not (isinstance(doc, str | type) or typing.get_origin(doc) is not None):
            raise ConfigurationError(
                f"{what}: responses[{status}] must be a description (a str) or the type of "
                f"the body, not {doc!r}"
            )
    return MappingProxyType(dict(responses))


def route_meta(what: str, call: str, options: Mapping[str, Any]) -> RouteMeta:
    """Check the keywords of the registration ``call`` (``get``, ...) for the route ``what``
    (``GET /users/{id}``): ``ConfigurationError`` saying what to pass instead, ``TypeError``
    for a keyword the call does not take. ``name`` is ``""`` until :func:`named`."""
    unknown = sorted(options.keys() - RouteOptions.__annotations__.keys())
    if unknown:
        raise TypeError(f"{call}() got an unexpected keyword argument {unknown[0]!r}")
    name = options.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigurationError(f"{what}: name must be a non-empty str, not {name!r}")
    status = options.get("status")
    if status is not None and not _is_status(status):
        raise ConfigurationError(
            f"{what}: status={status!r} is not an HTTP status; pass an int from 100 to 599 "
            "(such as status=201)"
        )
    return RouteMeta(
        name=name or "",
        explicit=name is not None,
        status=status,
        tags=_tags(what, options.get("tags", ())),
        summary=_optional_text(what, "summary", options.get("summary")),
        description=_optional_text(what, "description", options.get("description")),
        deprecated=_flag(what, "deprecated", options.get("deprecated", False)),
        include_in_schema=_flag(what, "include_in_schema", options.get("include_in_schema", True)),
        responses=_responses(what, options.get("responses")),
    )


def named(meta: RouteMeta, handler: Callable[..., Any]) -> RouteMeta:
    """``meta`` with its name: the given one, else the handler's ``__name__`` (the class
    name of a callable object without one)."""
    if meta.explicit:
        return meta
    return attrs.evolve(meta, name=getattr(handler, "__name__", type(handler).__name__))


def check_nest_name(prefix: str, name: object) -> None:
    """A nest ``name``: a non-empty str that neither starts nor ends with a dot."""
    if name is not None and (not isinstance(name, str) or not name or name.strip(".") != name):
        raise ConfigurationError(
            f"nest({prefix!r}, ...): name must be a non-empty str such as 'api' "
            f"(without a leading or trailing dot), not {name!r}"
        )
