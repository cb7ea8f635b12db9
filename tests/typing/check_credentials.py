"""Type tests, checked by ``mypy --strict`` in the ``typing`` nox session (not run by pytest):
to a type checker a credential parameter is the value the handler gets."""

from __future__ import annotations

from typing import Annotated, assert_type

from trioframe import APIKey, BasicCredentials, BearerToken, Error, Realm, Response


async def handler(
    token: BearerToken,
    maybe: BearerToken | None,
    caught: BearerToken | Error,
    creds: BasicCredentials,
    admin: Annotated[BasicCredentials, Realm("admin")] | None,
    key: Annotated[str, APIKey(header="x-api-key")],
) -> Response:
    assert_type(token, str)
    assert_type(maybe, str | None)
    assert_type(caught, str | Error)
    assert_type(creds.username, str)
    assert_type(creds.password, str)
    assert_type(admin, BasicCredentials | None)
    assert_type(key, str)
    return Response.text("")
