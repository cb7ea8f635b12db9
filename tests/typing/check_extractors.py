"""Type tests, checked by ``mypy --strict`` in the ``typing`` nox session (not run by pytest):
to a type checker each extractor annotation is the plain type it wraps."""

from __future__ import annotations

from typing import Annotated, assert_type

import attrs

from trioframe import (
    Alias,
    CookieValue,
    Error,
    Extension,
    Form,
    HeaderValue,
    Json,
    Path,
    Query,
    Response,
    State,
)


@attrs.define
class Filters:
    page: int = 1


class Store:
    pass


async def handler(
    user_id: Path[int],
    pair: Path[tuple[int, str]],
    filters: Query[Filters],
    maybe: Query[Filters] | Error,
    body: Json[dict[str, int]],
    form: Form[Filters],
    store: State[Store],
    tag: Extension[str],
) -> Response:
    assert_type(user_id, int)
    assert_type(pair, tuple[int, str])
    assert_type(filters, Filters)
    assert_type(maybe, Filters | Error)
    assert_type(body, dict[str, int])
    assert_type(form, Filters)
    assert_type(store, Store)
    assert_type(tag, str)
    return Response.json({"id": user_id + 1, "page": filters.page})


async def single_values(
    page: Query[int],
    tags: Query[list[str]],
    size: Annotated[Query[int], Alias("page-size")],
    inner: Query[Annotated[int, Alias("inner")]],
    token: HeaderValue[str | None],
    session: CookieValue[str] | Error,
) -> Response:
    assert_type(page, int)
    assert_type(tags, list[str])
    assert_type(size, int)
    assert_type(inner, int)
    assert_type(token, str | None)
    assert_type(session, str | Error)
    return Response.json(page + size + inner)


def config_copies() -> None:
    from trioframe import ServerConfig

    assert_type(ServerConfig().with_max_body_size(1024).with_header_timeout(1.0), ServerConfig)
