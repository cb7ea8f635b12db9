"""Type tests, checked by ``mypy --strict`` in the ``typing`` nox session (not run by pytest):
to a type checker each extractor annotation is the plain type it wraps."""

from __future__ import annotations

from typing import assert_type

import attrs

from trioframe import Error, Extension, Form, Json, Path, Query, Response, State


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


def config_copies() -> None:
    from trioframe import ServerConfig

    assert_type(ServerConfig().with_max_body_size(1024).with_header_timeout(1.0), ServerConfig)
